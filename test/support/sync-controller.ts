import { CoreV1Api, KubeConfig, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startCli, startProcess, type Child } from '../../bin/child-process.js';
import {
  localSyncControllerArgs,
  localSyncControllerEnv,
  SYNC_CONTROLLER_SA,
  SYNC_CONTROLLER_STARTED,
  writeSyncControllerKubeconfig,
} from '../../bin/local-sync-controller.js';
import { connectKubeApi } from '../../driver/k8s/client/connect.js';
import { readManifests, type KubeCluster } from './kube-cluster.js';
import { requirePeer } from './peers.js';
import { parseMetrics } from './provider-process.js';
import { statusOf, until } from './until.js';

/** The SecretSync resource, for the client's custom-object calls. */
export const SECRET_SYNC_RESOURCE = {
  group: 'secret-sync.x-k8s.io',
  version: 'v1alpha1',
  plural: 'secretsyncs',
} as const;

/** A condition of a SecretSync's status, as the tests read it. */
export interface SecretSyncCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** The sync controller's user name in the audit log. */
export const SYNC_CONTROLLER_USER = `system:serviceaccount:${SYNC_CONTROLLER_SA.namespace}:${SYNC_CONTROLLER_SA.name}`;

/** A running sync controller and its providers, each in its own process. */
export interface SyncControllerStack {
  readonly controller: Child;
  /** The stack's temp dir (removed by stop). */
  readonly work: string;
  /** The file provider's root (fileProvider): write files here to change what it serves. */
  readonly providerRoot: string;
  /** The controller's --provider-volume: each provider serves `<name>.sock` here (another replica can use it). */
  readonly providersDir: string;
  /** The controller's /metrics as `name{labels}` → value. */
  metrics(): Promise<Map<string, number>>;
  /** GET on the controller's health port. */
  probe(path: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts one provider process of a stack, serving `<providersDir>/<provider name>.sock`;
 * `work` is the stack's temp dir, for the provider's own files. What it returns is stopped
 * with the stack.
 */
export type StackProvider = (providersDir: string, work: string) => Promise<{ stop(): Promise<unknown> }>;

/** Our file provider over `files` (path → text), rooted at the stack's providerRoot, serving as `name`. */
export function fileProvider(files: Record<string, string>, name = 'file'): StackProvider {
  return async (providersDir, work) => {
    const root = join(work, 'root');
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return startCli(
      [
        'provider',
        'file',
        `--endpoint=unix://${join(providersDir, `${name}.sock`)}`,
        `--root=${root}`,
        `--hmac-key-file=${join(work, `${name}-hmac.key`)}`,
      ],
      /provider started/,
    );
  };
}

/**
 * Upstream's fake provider (the Go peer test/peers/upstream-fake-provider, upstream's
 * MockCSIProviderServer) serving `files` (path → text, mode 0644, each object at version
 * `v1`) as `name`, whatever the Mount asks for.
 */
export function upstreamFakeProvider(name: string, files: Record<string, string>): StackProvider {
  return async (providersDir, work) => {
    const config = join(work, `${name}.json`);
    await writeFile(
      config,
      JSON.stringify({
        objects: Object.fromEntries(Object.keys(files).map((path) => [path, 'v1'])),
        files: Object.entries(files).map(([path, text]) => ({
          path,
          mode: 0o644,
          contents: Buffer.from(text).toString('base64'),
        })),
      }),
    );
    const socket = `unix://${join(providersDir, `${name}.sock`)}`;
    return startProcess(
      requirePeer('UPSTREAM_FAKE_PROVIDER'),
      ['--endpoint', socket, '--config', config],
      /listening on/,
    );
  };
}

/**
 * Creates `obj` as the admin; one that exists is kept. A CustomResourceDefinition goes as
 * written, through our own client: the client library's typed serializer drops every
 * `x-kubernetes-*` key of its schema (the CEL rules, the list-map keys).
 */
async function createKept(cluster: KubeCluster, obj: KubernetesObject): Promise<void> {
  const kept = (err: unknown) => {
    if (statusOf(err) !== 409) throw err;
  };
  if (obj.kind !== 'CustomResourceDefinition') return void (await cluster.admin.objects.create(obj).catch(kept));
  const api = connectKubeApi(join(cluster.dir, 'kubeconfig'), {});
  try {
    await api.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', obj).catch(kept);
  } finally {
    api.close();
  }
}

/**
 * The audiences every test's controller may mint tokens for: installSyncControllerManifests
 * writes them into the admission policies' ConfigMap (deploy/sync-controller/admission-policies.yaml).
 */
export const TEST_TOKEN_AUDIENCES = ['aud-a', 'aud-b'] as const;

/** The ConfigMap the admission policies read their parameters from. */
export const POLICY_CONFIG = { namespace: 'kube-system', name: 'secrets-store-sync-controller-config' } as const;

/**
 * Installs deploy/sync-controller's CRD, RBAC and admission policies once per cluster (the
 * policies' ConfigMap with TEST_TOKEN_AUDIENCES), and waits until SecretSyncs are served and
 * the API server enforces the policies on the controller's identity.
 */
export async function installSyncControllerManifests(cluster: KubeCluster, repo: string): Promise<void> {
  for (const file of ['secretsyncs-crd.yaml', 'rbac.yaml', 'admission-policies.yaml'])
    for (const obj of await readManifests(join(repo, 'deploy/sync-controller', file))) {
      if (obj.kind === 'ConfigMap')
        (obj as { data: Record<string, string> }).data['tokenRequestAudience'] = TEST_TOKEN_AUDIENCES.join(',');
      await createKept(cluster, obj);
    }
  await until('SecretSyncs served', async () => {
    await cluster.admin.custom.listClusterCustomObject({
      group: 'secret-sync.x-k8s.io',
      version: 'v1alpha1',
      plural: 'secretsyncs',
    });
    return true;
  });
  await untilPoliciesEnforced(cluster);
}

/** What the API server answered a request: 'accepted', or the refusal's HTTP status and message. */
export type Answer = 'accepted' | { code: number | undefined; message: string };

/** Runs `request` and says whether the API server accepted it or how it refused. */
export async function answerOf(request: Promise<unknown>): Promise<Answer> {
  try {
    await request;
    return 'accepted';
  } catch (err) {
    const body = (err as { body?: unknown }).body;
    let message: string;
    try {
      message = String((JSON.parse(String(body)) as { message?: unknown }).message ?? '');
    } catch {
      message = String(body ?? (err as Error).message);
    }
    return { code: statusOf(err), message };
  }
}

/** Whether `answer` is a refusal (403) whose message includes `words`. */
export function refusedWith(answer: Answer, words: string): boolean {
  return answer !== 'accepted' && answer.code === 403 && answer.message.includes(words);
}

/** A Secret as the controller writes it: owned by the SecretSync of its name (`uid`), with the controller's label. */
export function ownedSecret(name: string, uid: string, type = 'Opaque'): V1Secret {
  return {
    metadata: {
      name,
      labels: { 'secrets-store.sync.x-k8s.io': '' },
      ownerReferences: [{ apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name, uid }],
    },
    type,
    data: { k: Buffer.from('v').toString('base64') },
  };
}

/**
 * Waits until the API server enforces the policies, with their ConfigMap, on the controller:
 * policies take effect some time after they are created. The probes are dry runs, and
 * token requests for the controller's own ServiceAccount.
 */
async function untilPoliciesEnforced(cluster: KubeCluster): Promise<void> {
  const { core } = await syncControllerClients(cluster);
  const namespace = SYNC_CONTROLLER_SA.namespace;
  const dryCreate = (body: V1Secret) => answerOf(core.createNamespacedSecret({ namespace, body, dryRun: 'All' }));
  const token = (audience: string) =>
    answerOf(
      core.createNamespacedServiceAccountToken({
        ...SYNC_CONTROLLER_SA,
        body: { spec: { audiences: [audience], expirationSeconds: 600 } },
      }),
    );
  await until('admission policies enforced on the sync controller', async () => {
    const answers = await Promise.all([
      dryCreate(ownedSecret('vap-probe', 'u-1', 'example.com/not-allowed')),
      dryCreate(saTokenSecret('vap-probe')),
      dryCreate(ownedSecret('vap-probe', 'u-1')),
      token('not-configured'),
      token(TEST_TOKEN_AUDIENCES[0]),
    ]);
    const [badType, saToken, allowed, otherAudience, configured] = answers;
    if (
      refusedWith(badType, 'allowed types') &&
      refusedWith(saToken, 'service-account-token') &&
      allowed === 'accepted' &&
      refusedWith(otherAudience, 'tokenRequestAudience') &&
      configured === 'accepted'
    )
      return true;
    // until reports the last of these when it gives up.
    throw new Error(`not yet: ${JSON.stringify(answers)}`);
  });
}

/** A kubernetes.io/service-account-token Secret, valid apart from what the policies say (owned as the controller's). */
export function saTokenSecret(name: string): V1Secret {
  const secret = ownedSecret(name, 'u-1', 'kubernetes.io/service-account-token');
  return {
    ...secret,
    metadata: { ...secret.metadata, annotations: { 'kubernetes.io/service-account.name': 'default' } },
  };
}

/** Clients that act as the controller: a token of its ServiceAccount, authorised only by deploy/sync-controller/rbac.yaml. */
export async function syncControllerClients(cluster: KubeCluster): Promise<{ core: CoreV1Api }> {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.url, caFile: cluster.caFile, skipTLSVerify: false }],
    users: [{ name: 'sync-controller', token: await controllerToken(cluster) }],
    contexts: [{ name: 'sync-controller', cluster: 'test', user: 'sync-controller' }],
    currentContext: 'sync-controller',
  });
  return { core: config.makeApiClient(CoreV1Api) };
}

/** A token of the controller's ServiceAccount, minted by the admin (the policies bind the controller, not the admin). */
async function controllerToken(cluster: KubeCluster): Promise<string> {
  const request = await cluster.admin.core.createNamespacedServiceAccountToken({
    ...SYNC_CONTROLLER_SA,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  return request.status?.token ?? '';
}

/** A kubeconfig with a token of the controller's ServiceAccount: only our RBAC authorises it. */
export async function controllerKubeconfig(cluster: KubeCluster, path: string): Promise<void> {
  const admin = connectKubeApi(join(cluster.dir, 'kubeconfig'), {});
  try {
    await writeSyncControllerKubeconfig(admin, cluster, path);
  } finally {
    admin.close();
  }
}

/** One controller process of a stack: its metrics and probes by the ports it logged. */
export interface SyncControllerReplica {
  readonly controller: Child;
  /** The replica's /metrics as `name{labels}` → value. */
  metrics(): Promise<Map<string, number>>;
  /** GET on the replica's health port. */
  probe(path: string): Promise<number>;
}

/**
 * Starts one controller process with the controller's own token, reading provider
 * sockets from `providersDir`; `podName` is its SYNC_CONTROLLER_POD_NAME.
 */
export async function startSyncControllerReplica(
  cluster: KubeCluster,
  providersDir: string,
  args: readonly string[],
  podName = 'ssc-0',
): Promise<SyncControllerReplica> {
  const home = await mkdtemp(join(tmpdir(), 'ssc-syncctl-replica-'));
  try {
    await controllerKubeconfig(cluster, join(home, 'kubeconfig'));
    const controller = await startCli(
      localSyncControllerArgs(providersDir, join(home, 'kubeconfig'), args),
      SYNC_CONTROLLER_STARTED,
      { env: localSyncControllerEnv(home, { name: podName, uid: `u-${podName}` }) },
    );
    const port = (name: string) => new RegExp(`"${name}":(\\d+)`).exec(controller.stderr())?.[1];
    const stop = controller.stop.bind(controller);
    return {
      controller: {
        process: controller.process,
        stderr: () => controller.stderr(),
        async stop(graceMs?: number) {
          const code = await stop(graceMs);
          await rm(home, { recursive: true, force: true });
          return code;
        },
      },
      async metrics() {
        const res = await fetch(`http://127.0.0.1:${port('metricsPort')}/metrics`);
        return parseMetrics(await res.text());
      },
      async probe(path) {
        return (await fetch(`http://127.0.0.1:${port('healthPort')}${path}`)).status;
      },
    };
  } catch (err) {
    await rm(home, { recursive: true, force: true });
    throw err;
  }
}

/** Starts the file provider over `files` and the controller with `args` (see startSyncControllerWith). */
export function startSyncControllerStack(
  cluster: KubeCluster,
  files: Record<string, string>,
  args: readonly string[],
): Promise<SyncControllerStack> {
  return startSyncControllerWith(cluster, [fileProvider(files)], args);
}

/**
 * Starts `providers`, then the controller with `args`, bound by deploy/sync-controller's
 * RBAC; cleans up what started if one fails.
 */
export async function startSyncControllerWith(
  cluster: KubeCluster,
  providers: readonly StackProvider[],
  args: readonly string[],
): Promise<SyncControllerStack> {
  const work = await mkdtemp(join(tmpdir(), 'ssc-syncctl-'));
  const providersDir = join(work, 'providers');
  const started: { stop(): Promise<unknown> }[] = [];
  const stop = async () => {
    for (const child of started.reverse()) await child.stop();
    await rm(work, { recursive: true, force: true });
  };
  try {
    await mkdir(providersDir, { recursive: true });
    for (const start of providers) started.push(await start(providersDir, work));
    const replica = await startSyncControllerReplica(cluster, providersDir, args);
    started.push(replica.controller);
    return { ...replica, work, providerRoot: join(work, 'root'), providersDir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What a test's SecretSync asks for; the service account defaults to `default`. */
export interface TestSecretSyncSpec {
  readonly secretProviderClassName: string;
  readonly serviceAccountName?: string;
  readonly secretObject: Record<string, unknown>;
}

/** Creates a SecretSync as the admin; resolves with it as stored (its UID for owner references). */
export async function createSecretSync(
  cluster: KubeCluster,
  namespace: string,
  name: string,
  spec: TestSecretSyncSpec,
): Promise<{ metadata: { uid: string } }> {
  return (await cluster.admin.custom.createNamespacedCustomObject({
    ...SECRET_SYNC_RESOURCE,
    namespace,
    body: {
      apiVersion: 'secret-sync.x-k8s.io/v1alpha1',
      kind: 'SecretSync',
      metadata: { name },
      spec: { serviceAccountName: 'default', ...spec },
    },
  })) as { metadata: { uid: string } };
}

/** The sum of a metric's series whose labels contain every `label="value"` given. */
export function metricSum(metrics: ReadonlyMap<string, number>, name: string, labels: readonly string[] = []): number {
  let sum = 0;
  for (const [key, value] of metrics)
    if ((key === name || key.startsWith(`${name}{`)) && labels.every((l) => key.includes(l))) sum += value;
  return sum;
}
