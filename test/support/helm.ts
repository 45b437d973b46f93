// Runs the real helm (v3.22.0, built by test/peers/install.sh) against our chart, with its
// own cache/config/data directories so tests never read or write the user's ~/.config/helm.
import type { KubernetesObject } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { Obj } from './deploy-manifests.js';
import { requirePeer } from './peers.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Our chart's directory. */
export const CHART_DIR = join(REPO, 'charts/secrets-store-csi');

/** The Kubernetes version `helm template` renders for (helm's own default, 1.20, is below the chart's kubeVersion). */
export const RENDER_KUBE_VERSION = '1.36.0';

/** A manifest object as rendered: untyped YAML. */
export type Manifest = KubernetesObject & Obj;

/** What one helm run printed. */
export interface HelmOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/** A helm runner with private state directories, pointed at one cluster (or none). */
export interface Helm {
  /** Runs helm; rejects with helm's stderr when it exits non-zero. */
  run(args: readonly string[]): Promise<HelmOutput>;
  /** `helm template` of our chart with these values: the rendered objects, in order. */
  template(
    values: object,
    options?: { release?: string; namespace?: string; extraArgs?: readonly string[] },
  ): Promise<Manifest[]>;
  /** Writes values to a file helm can read with -f. */
  valuesFile(values: object): string;
  /** Removes the private directories. */
  cleanup(): void;
}

/** Creates a helm runner; kubeconfig is the cluster helm talks to (install, upgrade, lookup). */
export function createHelm(kubeconfig?: string): Helm {
  const binary = requirePeer('HELM');
  const home = mkdtempSync(join(tmpdir(), 'ssc-helm-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    // No cluster: point at a file that does not exist rather than at ~/.kube/config.
    KUBECONFIG: kubeconfig ?? join(home, 'no-kubeconfig'),
  };
  let files = 0;
  const helm: Helm = {
    run(args) {
      return new Promise((resolve, reject) => {
        execFile(binary, [...args], { env, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`helm ${args[0]} failed: ${stderr.trim() || err.message}`));
          else resolve({ stdout, stderr });
        });
      });
    },
    valuesFile(values) {
      const path = join(home, `values-${files++}.json`);
      writeFileSync(path, JSON.stringify(values));
      return path;
    },
    async template(values, options = {}) {
      const { stdout } = await helm.run([
        'template',
        options.release ?? 'csi-secrets-store',
        CHART_DIR,
        '--namespace',
        options.namespace ?? 'kube-system',
        '--kube-version',
        RENDER_KUBE_VERSION,
        '-f',
        helm.valuesFile(values),
        ...(options.extraArgs ?? []),
      ]);
      return parseManifests(stdout);
    },
    cleanup() {
      rmSync(home, { recursive: true, force: true });
    },
  };
  return helm;
}

/** Every object in a multi-document YAML stream (empty documents dropped); throws on YAML errors. */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
      return doc.toJS() as Manifest;
    })
    .filter((o) => o !== null && typeof o === 'object');
}

/** The one object of this kind and name; throws naming both when there is not exactly one. */
export function findManifest(objects: readonly Manifest[], kind: string, name: string): Manifest {
  const found = objects.filter((o) => o.kind === kind && o.metadata?.name === name);
  if (found.length !== 1)
    throw new Error(
      `expected one ${kind} ${name}, found ${found.length} (have: ${objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ')})`,
    );
  return found[0] as Manifest;
}

/** A container of a DaemonSet's pod template by name (initContainers with init). */
export function podContainer(ds: Manifest, name: string, init = false): Obj {
  const list: Obj[] = ds['spec']?.template?.spec?.[init ? 'initContainers' : 'containers'] ?? [];
  const found = list.find((c) => c['name'] === name);
  if (!found) throw new Error(`${ds.metadata?.name} has no ${init ? 'init ' : ''}container ${name}`);
  return found;
}

/** Expands $(VAR) in a container's args from its literal env values (and extraEnv), as kubelet does. */
export function expandArgs(container: Obj, extraEnv: Record<string, string>): string[] {
  const env: Record<string, string> = { ...extraEnv };
  for (const e of (container['env'] ?? []) as Obj[]) if (typeof e['value'] === 'string') env[e['name']] = e['value'];
  return ((container['args'] ?? []) as string[]).map((a) =>
    a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m),
  );
}

function statusMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text;
  }
}

/** Where each kind the chart renders lives in the API (the chart renders no other kinds). */
const RESOURCES: Readonly<Record<string, { plural: string; namespaced: boolean }>> = {
  ServiceAccount: { plural: 'serviceaccounts', namespaced: true },
  ConfigMap: { plural: 'configmaps', namespaced: true },
  DaemonSet: { plural: 'daemonsets', namespaced: true },
  Deployment: { plural: 'deployments', namespaced: true },
  ValidatingAdmissionPolicy: { plural: 'validatingadmissionpolicies', namespaced: false },
  ValidatingAdmissionPolicyBinding: { plural: 'validatingadmissionpolicybindings', namespaced: false },
  Role: { plural: 'roles', namespaced: true },
  RoleBinding: { plural: 'rolebindings', namespaced: true },
  ClusterRole: { plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { plural: 'clusterrolebindings', namespaced: false },
  CSIDriver: { plural: 'csidrivers', namespaced: false },
  CustomResourceDefinition: { plural: 'customresourcedefinitions', namespaced: false },
};

/** The API path of an object (namespaced kinds in their metadata.namespace). */
export function objectPath(obj: Manifest): string {
  const resource = RESOURCES[obj.kind ?? ''];
  if (!resource) throw new Error(`the chart rendered a kind the tests do not know: ${obj.kind}`);
  const apiVersion = obj.apiVersion ?? '';
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = resource.namespaced ? `/namespaces/${obj.metadata?.namespace ?? ''}` : '';
  return `${base}${ns}/${resource.plural}/${obj.metadata?.name ?? ''}`;
}

/**
 * Server-side apply of one object with dryRun=All and fieldValidation=Strict: the API
 * server runs defaulting, validation and admission and rejects unknown or duplicate
 * fields, and nothing is stored. Resolves with the object the server would store;
 * rejects with the API server's message.
 */
export function serverDryRunApply(
  cluster: { url: string; adminToken: string; caFile: string },
  obj: Manifest,
): Promise<Manifest> {
  const url = new URL(
    `${objectPath(obj)}?dryRun=All&fieldManager=ssc-chart-test&force=true&fieldValidation=Strict`,
    cluster.url,
  );
  const body = JSON.stringify(obj);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: 'PATCH',
        ca: readFileSync(cluster.caFile),
        headers: {
          Authorization: `Bearer ${cluster.adminToken}`,
          'Content-Type': 'application/apply-patch+yaml',
          Accept: 'application/json',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200 || res.statusCode === 201) resolve(JSON.parse(text) as Manifest);
          else reject(new Error(`${obj.kind} ${obj.metadata?.name}: HTTP ${res.statusCode}: ${statusMessage(text)}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
