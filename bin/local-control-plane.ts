// A throwaway Kubernetes control plane on loopback from the test peers: etcd and
// kube-apiserver started by test/peers/kube/start-cluster.sh (detached, state and logs in
// one directory), and kube-controller-manager's arguments for the controllers that need
// no node. Used by `demo-sync` and by the tests (test/support/kube-cluster.ts,
// controller-manager.ts), so both start the same cluster the same way.
import { execFile, execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository (dist/bin/ → ../../): the peers' scripts live under test/peers/kube/. */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const START_SCRIPT = join(REPO, 'test/peers/kube/start-cluster.sh');
const STOP_SCRIPT = join(REPO, 'test/peers/kube/stop-cluster.sh');

/** A running etcd + kube-apiserver, as start-cluster.sh reports it. */
export interface ControlPlane {
  /** Its state, logs and credentials (pki/, kubeconfig, audit.log); the caller deletes it. */
  readonly dir: string;
  readonly url: string;
  /** The system:masters token, also in `kubeconfig`. */
  readonly adminToken: string;
  readonly caFile: string;
  /** An admin (system:masters) kubeconfig. */
  readonly kubeconfig: string;
  /** JSON lines, one per request of a service account. */
  readonly auditLog: string;
}

/** The KEY=value lines start-cluster.sh prints, as a map. */
export function parseClusterEnv(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return env;
}

function runScript(script: string, dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [script, dir], { maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * Starts etcd and kube-apiserver with their state in `dir` (start-cluster.sh; put extra
 * static tokens in dir/extra-tokens.csv first). On failure the script has stopped both.
 */
export async function startControlPlane(dir: string): Promise<ControlPlane> {
  const env = parseClusterEnv(await runScript(START_SCRIPT, dir));
  return {
    dir,
    url: env.get('KUBE_URL') ?? '',
    adminToken: env.get('ADMIN_TOKEN') ?? '',
    caFile: env.get('CA_FILE') ?? '',
    kubeconfig: env.get('KUBECONFIG') ?? join(dir, 'kubeconfig'),
    auditLog: env.get('AUDIT_LOG') ?? join(dir, 'audit.log'),
  };
}

/** Stops what startControlPlane(dir) started (kube-apiserver, then etcd); `dir` stays. */
export async function stopControlPlane(dir: string): Promise<void> {
  await runScript(STOP_SCRIPT, dir);
}

/** stopControlPlane for a process's `exit` handler, where nothing asynchronous runs. */
export function stopControlPlaneSync(dir: string): void {
  try {
    execFileSync('bash', [STOP_SCRIPT, dir], { stdio: 'ignore' });
  } catch {
    /* already stopped */
  }
}

/** Writes a kubeconfig (mode 0600) that reaches the control plane as `user` with a bearer token. */
export async function writeTokenKubeconfig(
  path: string,
  cluster: Pick<ControlPlane, 'url' | 'caFile'>,
  user: string,
  token: string,
): Promise<void> {
  await writeFile(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: test',
      '  cluster:',
      `    server: ${cluster.url}`,
      `    certificate-authority: ${cluster.caFile}`,
      'users:',
      `- name: ${user}`,
      '  user:',
      `    token: ${token}`,
      'contexts:',
      `- name: ${user}`,
      `  context: {cluster: test, user: ${user}}`,
      `current-context: ${user}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}

/**
 * The kube-controller-manager controllers that run without nodes: others need
 * certificates, a cloud or a scheduler. The service-account token and root-CA publisher
 * controllers get the cluster's signing key and CA from its pki dir.
 */
export type LocalController =
  | 'garbage-collector-controller'
  | 'clusterrole-aggregation-controller'
  | 'serviceaccount-token-controller'
  | 'root-ca-certificate-publisher-controller';

/** What kube-controller-manager logs once the garbage collector has its graph and collects. */
export const GARBAGE_COLLECTOR_READY = /Proceeding to collect garbage/;

/**
 * kube-controller-manager's arguments: the control plane's admin kubeconfig, only
 * `controllers`, no leader election and no serving port.
 */
export function controllerManagerArgs(
  plane: Pick<ControlPlane, 'dir' | 'caFile'>,
  controllers: readonly LocalController[],
): string[] {
  const tokens = controllers.includes('serviceaccount-token-controller');
  return [
    `--kubeconfig=${join(plane.dir, 'kubeconfig')}`,
    `--controllers=${controllers.join(',')}`,
    '--leader-elect=false',
    '--secure-port=0',
    // Discovery of the CRDs the tests create is re-read this often by the garbage collector.
    '--concurrent-gc-syncs=5',
    ...(tokens ? [`--service-account-private-key-file=${join(plane.dir, 'pki', 'sa.key')}`] : []),
    ...(tokens || controllers.includes('root-ca-certificate-publisher-controller')
      ? [`--root-ca-file=${plane.caFile}`]
      : []),
  ];
}
