import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import { readManifests, writeTokenKubeconfig, type KubeCluster } from './kube-cluster.js';
import { parseMetrics } from './provider-process.js';
import { statusOf, until } from './until.js';

/** The sync controller's user name in the audit log. */
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

export const SYNC_CONTROLLER_USER = 'system:serviceaccount:kube-system:secrets-store-sync-controller';

/** The sync controller's identity, bound by deploy/sync-controller/rbac.yaml. */
const CONTROLLER_SA = { namespace: 'kube-system', name: 'secrets-store-sync-controller' };

/** A running sync controller with the file provider as its provider, each in its own process. */
export interface SyncControllerStack {
  readonly controller: Child;
  /** The file provider's root: write files here to change what it serves. */
  readonly providerRoot: string;
  /** The controller's /metrics as `name{labels}` → value. */
  metrics(): Promise<Map<string, number>>;
  /** GET on the controller's health port. */
  probe(path: string): Promise<number>;
  stop(): Promise<void>;
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
      await cluster.admin.objects.create(obj).catch((err: unknown) => {
        if (statusOf(err) !== 409) throw err;
      });
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
  const namespace = CONTROLLER_SA.namespace;
  const dryCreate = (body: V1Secret) => answerOf(core.createNamespacedSecret({ namespace, body, dryRun: 'All' }));
  const token = (audience: string) =>
    answerOf(
      core.createNamespacedServiceAccountToken({
        ...CONTROLLER_SA,
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
    ...CONTROLLER_SA,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  return request.status?.token ?? '';
}

/** A kubeconfig with a token of the controller's ServiceAccount: only our RBAC authorises it. */
async function controllerKubeconfig(cluster: KubeCluster, path: string): Promise<void> {
  await writeTokenKubeconfig(path, cluster, 'sync-controller', await controllerToken(cluster));
}

/** Starts the file provider over `files` and the controller with `args`; cleans up what started if one fails. */
export async function startSyncControllerStack(
  cluster: KubeCluster,
  files: Record<string, string>,
  args: readonly string[],
): Promise<SyncControllerStack> {
  const work = await mkdtemp(join(tmpdir(), 'ssc-syncctl-'));
  const providersDir = join(work, 'providers');
  const providerRoot = join(work, 'root');
  const children: Child[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await child.stop();
    await rm(work, { recursive: true, force: true });
  };
  try {
    await mkdir(providersDir, { recursive: true });
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(providerRoot, path)), { recursive: true });
      await writeFile(join(providerRoot, path), text);
    }
    const fileSock = `--endpoint=unix://${join(providersDir, 'file.sock')}`;
    const hmac = `--hmac-key-file=${join(work, 'hmac.key')}`;
    children.push(await startCli(['provider', 'file', fileSock, `--root=${providerRoot}`, hmac], /provider started/));
    await controllerKubeconfig(cluster, join(work, 'kubeconfig'));
    const controller = await startCli(
      [
        'sync-controller',
        `--provider-volume=${providersDir}`,
        `--kubeconfig=${join(work, 'kubeconfig')}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        ...args,
      ],
      /sync controller started/,
      {
        env: {
          PATH: process.env['PATH'],
          HOME: work,
          SYNC_CONTROLLER_POD_NAME: 'ssc-0',
          SYNC_CONTROLLER_POD_UID: 'u-1',
        },
      },
    );
    children.push(controller);
    const port = (name: string) => new RegExp(`"${name}":(\\d+)`).exec(controller.stderr())?.[1];
    return {
      controller,
      providerRoot,
      async metrics() {
        const res = await fetch(`http://127.0.0.1:${port('metricsPort')}/metrics`);
        return parseMetrics(await res.text());
      },
      async probe(path) {
        return (await fetch(`http://127.0.0.1:${port('healthPort')}${path}`)).status;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The sum of a metric's series whose labels contain every `label="value"` given. */
export function metricSum(metrics: ReadonlyMap<string, number>, name: string, labels: readonly string[] = []): number {
  let sum = 0;
  for (const [key, value] of metrics)
    if ((key === name || key.startsWith(`${name}{`)) && labels.every((l) => key.includes(l))) sum += value;
  return sum;
}
