// deploy/ read for the static manifest tests (test/unit/deploy-*.test.ts): every object of
// every YAML file, with lookups that fail the test when an object is missing.
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { ApiRight } from '../../driver/k8s/api-rights.js';

/** The repository root. */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** deploy/ in the repository. */
export const DEPLOY = join(REPO, 'deploy');

/**
 * A manifest object: untyped YAML, walked by path in assertions (a wrong path fails the
 * assertion that reads it). The tests' one `any`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;
/** One object of deploy/ with its file (relative to deploy/). */
export interface Manifest {
  file: string;
  obj: Obj;
}

/** The YAML files below `dir`, sorted. */
export function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFiles(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    });
}

/** The objects of a YAML file (every document). */
export function parseFile(path: string): Obj[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${relative(REPO, path)}: ${doc.errors[0]?.message}`);
      return doc.toJS() as Obj;
    })
    .filter((o) => o !== null && typeof o === 'object');
}

/** Every YAML file of deploy/. */
export const FILES = yamlFiles(DEPLOY);
/** Every object of deploy/. */
export const MANIFESTS: Manifest[] = FILES.flatMap((path) =>
  parseFile(path).map((obj) => ({ file: relative(DEPLOY, path), obj })),
);

/** The one object of deploy/ of that kind and name (fails the test otherwise). */
export function find(kind: string, name: string): Manifest {
  const found = MANIFESTS.filter((m) => m.obj['kind'] === kind && m.obj['metadata']?.name === name);
  expect(found, `${kind} ${name}`).to.have.lengthOf(1);
  return found[0] as Manifest;
}

/** A DaemonSet's container (or init container) by name (fails the test when absent). */
export function container(ds: Obj, name: string, init = false): Obj {
  const list: Obj[] = ds['spec'].template.spec[init ? 'initContainers' : 'containers'] ?? [];
  const c = list.find((x) => x['name'] === name);
  expect(c, `container ${name}`).to.not.equal(undefined);
  return c as Obj;
}

/** Expands $(VAR) references the way kubelet does, from the container's literal env values. */
export function expandArgs(c: Obj, extraEnv: Record<string, string>): string[] {
  const env: Record<string, string> = { ...extraEnv };
  for (const e of (c['env'] ?? []) as Obj[]) if (typeof e['value'] === 'string') env[e['name']] = e['value'];
  return (c['args'] as string[]).map((a) =>
    a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m),
  );
}

/** Where a container path comes from: its volume, and the path inside that volume. */
export interface VolumeFile {
  readonly volume: Obj;
  readonly mount: Obj;
  readonly inside: string;
}

/** The volume (any kind) behind a container path, through the longest volumeMount holding it. */
export function volumeFileOf(ds: Obj, container: Obj, containerPath: string): VolumeFile {
  const mount = ((container['volumeMounts'] ?? []) as Obj[])
    .filter(
      (m) =>
        containerPath === m['mountPath'] || containerPath.startsWith(`${String(m['mountPath']).replace(/\/$/, '')}/`),
    )
    .sort((a, b) => String(b['mountPath']).length - String(a['mountPath']).length)[0];
  expect(mount, `a volumeMount holding ${containerPath} in ${container['name']}`).to.not.equal(undefined);
  const volume = ((ds['spec'].template.spec.volumes ?? []) as Obj[]).find((v) => v['name'] === mount?.['name']);
  expect(volume, `volume ${mount?.['name']}`).to.not.equal(undefined);
  return {
    volume: volume as Obj,
    mount: mount as Obj,
    inside: posix.relative(String(mount?.['mountPath']), containerPath),
  };
}

/** The host path behind a container path: the volumeMount that holds it and its hostPath volume. */
export function hostPathOf(ds: Obj, c: Obj, containerPath: string): string {
  const f = volumeFileOf(ds, c, containerPath);
  expect(f.volume['hostPath'], `volume ${f.volume['name']} is a hostPath`).to.be.an('object');
  return posix.normalize(posix.join(String(f.volume['hostPath'].path), f.inside)).replace(/\/$/, '');
}

/** A ClusterRole's rules as rights, one per verb, resource and name (sorted, comparable). */
export function grants(role: Obj): string[] {
  const out = new Set<string>();
  for (const rule of role['rules'] as Obj[]) {
    for (const group of rule['apiGroups'] as string[]) {
      for (const resource of rule['resources'] as string[]) {
        for (const verb of rule['verbs'] as string[]) {
          for (const name of (rule['resourceNames'] as string[] | undefined) ?? [undefined])
            out.add(rightKey({ verb, group, resource, ...(name !== undefined ? { name } : {}) }));
        }
      }
    }
  }
  return [...out].sort();
}

/** A right as one comparable string. */
export function rightKey(r: ApiRight): string {
  return `${r.verb} ${r.group}/${r.resource}${r.name !== undefined ? ` "${r.name}"` : ''}`;
}

/** Our CSIDriver's name. */
export const CSI_DRIVER_NAME = 'secrets-store.csi.k8s.io';
/** Manifests the default kustomization leaves out on purpose (listed there, commented). */
export const OPT_IN = [
  'rbac-workload-restart.yaml',
  'provider-vault-daemonset.yaml',
  'provider-azure-daemonset.yaml',
  'provider-exec-daemonset.yaml',
  'provider-pki-daemonset.yaml',
];
/** The driver's ServiceAccount. */
export const SA = { kind: 'ServiceAccount', name: 'secrets-store-csi-driver', namespace: 'kube-system' };
/** The driver DaemonSet of deploy/. */
export const DRIVER_DS = (): Obj => find('DaemonSet', 'csi-secrets-store').obj;
/** The file provider DaemonSet of deploy/. */
export const PROVIDER_DS = (): Obj => find('DaemonSet', 'csi-secrets-store-provider-file').obj;
/** The vault provider DaemonSet of deploy/ (opt-in). */
export const VAULT_PROVIDER_DS = (): Obj => find('DaemonSet', 'csi-secrets-store-provider-vault').obj;
/** The azure provider DaemonSet of deploy/ (opt-in). */
export const AZURE_PROVIDER_DS = (): Obj => find('DaemonSet', 'csi-secrets-store-provider-azure').obj;
/** The exec provider DaemonSet of deploy/ (opt-in). */
export const EXEC_PROVIDER_DS = (): Obj => find('DaemonSet', 'csi-secrets-store-provider-exec').obj;
/** The pki provider DaemonSet of deploy/ (opt-in). */
export const PKI_PROVIDER_DS = (): Obj => find('DaemonSet', 'csi-secrets-store-provider-pki').obj;

/**
 * deploy/csidriver.yaml as a vault user edits it: the commented `tokenRequests:` block
 * (up to its first entry's end) and the `serviceAccountTokenInSecrets: true` line
 * uncommented. Throws when the comment no longer has that shape.
 */
export function csiDriverTextForVault(): string {
  const lines = readFileSync(join(DEPLOY, 'csidriver.yaml'), 'utf8').split('\n');
  const start = lines.findIndex((l) => l === '  # tokenRequests:');
  if (start < 0) throw new Error('deploy/csidriver.yaml has no commented "  # tokenRequests:" line');
  let end = start + 1;
  while (end < lines.length && /^ {2}# {3}/.test(lines[end] as string)) end++;
  const inSecrets = lines.findIndex((l) => l === '  # serviceAccountTokenInSecrets: true');
  if (inSecrets < 0)
    throw new Error('deploy/csidriver.yaml has no commented "  # serviceAccountTokenInSecrets: true" line');
  return lines.map((l, i) => ((i >= start && i < end) || i === inSecrets ? l.replace(/^ {2}# /, '  ') : l)).join('\n');
}

/**
 * deploy/csidriver.yaml as an azure workload-identity user edits it: `tokenRequests:`, the
 * commented api://AzureADTokenExchange entry and `serviceAccountTokenInSecrets: true`
 * uncommented (the vault entry stays commented). Throws when the comment no longer has
 * that shape.
 */
export function csiDriverTextForAzure(): string {
  const lines = readFileSync(join(DEPLOY, 'csidriver.yaml'), 'utf8').split('\n');
  const wanted = [
    '  # tokenRequests:',
    '  #   - audience: api://AzureADTokenExchange',
    '  # serviceAccountTokenInSecrets: true',
  ];
  const at = wanted.map((w) => {
    const i = lines.indexOf(w);
    if (i < 0) throw new Error(`deploy/csidriver.yaml has no commented "${w}" line`);
    return i;
  });
  return lines.map((l, i) => (at.includes(i) ? l.replace(/^ {2}# /, '  ') : l)).join('\n');
}
