import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { yamlModule } from '../../../lib/lazy-yaml.js';

/** TLS settings for the API server connection. */
export interface ApiTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** tls-server-name: the name the server certificate is checked against. */
  readonly servername?: string;
  readonly rejectUnauthorized: boolean;
}

/** A client-go credential plugin (kubeconfig `user.exec`). */
export interface ExecPlugin {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly apiVersion: string;
  /** Folder of the kubeconfig that named it: a relative command is resolved there. */
  readonly baseDir: string;
}

/** How requests authenticate (besides a client certificate in `tls`). */
export type ApiCredentials =
  | { readonly type: 'none' }
  | { readonly type: 'token'; readonly token: string }
  /** Re-read periodically: projected service-account tokens rotate. */
  | { readonly type: 'token-file'; readonly path: string }
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'exec'; readonly plugin: ExecPlugin };

/** Where the API server is and how to authenticate to it. */
export interface ApiEndpoint {
  readonly server: URL;
  readonly tls: ApiTls;
  readonly credentials: ApiCredentials;
}

/** Where a pod's service-account credentials are mounted. */
export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Entry = Record<string, unknown>;

/** A kubeconfig file's content, with the folder its relative paths are relative to. */
interface KubeconfigFile {
  readonly path: string;
  readonly content: string;
}

function named(
  file: Entry,
  list: string,
  field: string,
  baseDir: string,
  into: Map<string, { value: Entry; baseDir: string }>,
): void {
  const items = file[list];
  if (items === undefined || items === null) return;
  if (!Array.isArray(items)) throw new Error(`kubeconfig: ${list} must be a list`);
  for (const item of items as Entry[]) {
    const name = item?.['name'];
    if (typeof name !== 'string') throw new Error(`kubeconfig: an entry of ${list} has no name`);
    const value = item[field];
    // kubectl's merge rule: the first file that defines a name wins.
    if (!into.has(name)) into.set(name, { value: value && typeof value === 'object' ? (value as Entry) : {}, baseDir });
  }
}

function str(entry: Entry, key: string, where: string): string | undefined {
  const v = entry[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new Error(`kubeconfig: ${where}.${key} must be a string`);
  return v;
}

/** Inline base64 data, else the file a (possibly relative) path names, else undefined. */
function dataOrFile(
  entry: Entry,
  key: string,
  where: string,
  baseDir: string,
  read: (path: string) => Buffer,
): Buffer | undefined {
  const data = str(entry, `${key}-data`, where);
  if (data !== undefined) return Buffer.from(data, 'base64');
  const path = str(entry, key, where);
  if (path === undefined) return undefined;
  const full = isAbsolute(path) ? path : join(baseDir, path);
  try {
    return read(full);
  } catch (err) {
    // Node's own text ("ENOENT: no such file…") names no kubeconfig entry to fix.
    throw new Error(
      `kubeconfig: ${where}.${key} ${full} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: err },
    );
  }
}

function execPlugin(exec: Entry, where: string, baseDir: string): ExecPlugin {
  const command = str(exec, 'command', `${where}.exec`);
  if (!command) throw new Error(`kubeconfig: ${where}.exec.command is missing`);
  const args = exec['args'] ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))
    throw new Error(`kubeconfig: ${where}.exec.args must be a list of strings`);
  const env: Record<string, string> = {};
  for (const e of (exec['env'] ?? []) as Entry[]) {
    if (typeof e?.['name'] !== 'string' || typeof e['value'] !== 'string')
      throw new Error(`kubeconfig: ${where}.exec.env entries need a name and a value`);
    env[e['name']] = e['value'];
  }
  return {
    command,
    args: args as string[],
    env,
    apiVersion: str(exec, 'apiVersion', `${where}.exec`) ?? 'client.authentication.k8s.io/v1',
    baseDir,
  };
}

function credentialsOf(user: Entry, where: string, baseDir: string): ApiCredentials {
  if (user['auth-provider'])
    throw new Error(
      `kubeconfig: ${where}.auth-provider is not supported (client-go removed the built-in providers); use an exec credential plugin`,
    );
  if (user['exec']) return { type: 'exec', plugin: execPlugin(user['exec'] as Entry, where, baseDir) };
  const token = str(user, 'token', where);
  if (token !== undefined) return { type: 'token', token };
  const tokenFile = str(user, 'tokenFile', where);
  if (tokenFile !== undefined)
    return { type: 'token-file', path: isAbsolute(tokenFile) ? tokenFile : join(baseDir, tokenFile) };
  const username = str(user, 'username', where);
  if (username !== undefined) return { type: 'basic', username, password: str(user, 'password', where) ?? '' };
  return { type: 'none' };
}

/** Parses YAML without quoting it in errors: the offending line may hold a token. */
function parseYaml(path: string, content: string): unknown {
  const { parse, YAMLError } = yamlModule();
  try {
    return parse(content);
  } catch (err) {
    const at = err instanceof YAMLError ? err.linePos?.[0] : undefined;
    // No cause: the YAML error quotes the file, which may hold a token or a key.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`kubeconfig ${path} is not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}`);
  }
}

/**
 * The API endpoint of a kubeconfig's current context. Several files merge as kubectl
 * merges KUBECONFIG: the first file naming a cluster, user or context (or setting
 * current-context) wins; relative paths are relative to the file that holds them.
 */
export function endpointFromKubeconfig(
  files: readonly KubeconfigFile[],
  read: (path: string) => Buffer = readFileSync,
): ApiEndpoint {
  const clusters = new Map<string, { value: Entry; baseDir: string }>();
  const users = new Map<string, { value: Entry; baseDir: string }>();
  const contexts = new Map<string, { value: Entry; baseDir: string }>();
  let current: string | undefined;
  for (const { path, content } of files) {
    const file = (parseYaml(path, content) ?? {}) as Entry;
    if (typeof file !== 'object') throw new Error(`kubeconfig ${path} is not a YAML mapping`);
    const baseDir = resolve(dirname(path));
    named(file, 'clusters', 'cluster', baseDir, clusters);
    named(file, 'users', 'user', baseDir, users);
    named(file, 'contexts', 'context', baseDir, contexts);
    current ??= str(file, 'current-context', 'kubeconfig');
  }
  const context = current === undefined ? undefined : contexts.get(current)?.value;
  const clusterName = context ? str(context, 'cluster', `contexts[${current}]`) : undefined;
  const cluster = clusterName === undefined ? undefined : clusters.get(clusterName);
  if (!cluster)
    throw new Error('no Kubernetes cluster configured: set --kubeconfig, run in a pod, or use local mode (--spc-dir)');
  const where = `clusters[${clusterName}]`;
  const server = str(cluster.value, 'server', where);
  if (!server) throw new Error(`kubeconfig: ${where}.server is missing`);
  if (str(cluster.value, 'proxy-url', where))
    throw new Error(`kubeconfig: ${where}.proxy-url is not supported; the driver connects to the API server directly`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`kubeconfig: ${where}.server is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`kubeconfig: ${where}.server must be an https:// or http:// URL`);
  const userName = context ? str(context, 'user', `contexts[${current}]`) : undefined;
  const user = userName === undefined ? undefined : users.get(userName);
  // As client-go: a context naming a user that is not defined is an error, not anonymous access.
  if (userName !== undefined && !user)
    throw new Error(`kubeconfig: context ${current} names user ${userName}, which is not defined`);
  const userWhere = `users[${userName ?? ''}]`;
  const userEntry = user?.value ?? {};
  const userDir = user?.baseDir ?? cluster.baseDir;
  const servername = str(cluster.value, 'tls-server-name', where);
  const ca = dataOrFile(cluster.value, 'certificate-authority', where, cluster.baseDir, read);
  const cert = dataOrFile(userEntry, 'client-certificate', userWhere, userDir, read);
  const key = dataOrFile(userEntry, 'client-key', userWhere, userDir, read);
  if ((cert === undefined) !== (key === undefined))
    throw new Error(`kubeconfig: ${userWhere} needs both a client certificate and a client key`);
  return {
    server: url,
    tls: {
      rejectUnauthorized: cluster.value['insecure-skip-tls-verify'] !== true,
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      ...(servername ? { servername } : {}),
    },
    credentials: credentialsOf(userEntry, userWhere, userDir),
  };
}

/**
 * The in-cluster endpoint, as client-go builds it: KUBERNETES_SERVICE_HOST/PORT, the
 * pod's service-account token (re-read as it rotates) and the cluster CA.
 */
export function inClusterEndpoint(
  env: Readonly<Record<string, string | undefined>>,
  dir = IN_CLUSTER_DIR,
  read: (path: string) => Buffer = readFileSync,
): ApiEndpoint {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'] || '443';
  if (!host) throw new Error('not running in a pod: KUBERNETES_SERVICE_HOST is not set');
  const tokenPath = join(dir, 'token');
  read(tokenPath);
  return {
    server: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`),
    tls: { ca: read(join(dir, 'ca.crt')), rejectUnauthorized: true },
    credentials: { type: 'token-file', path: tokenPath },
  };
}
