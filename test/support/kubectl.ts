// The real kubectl (peer KUBECTL) as the cluster's admin, for tests that apply manifests
// the way their authors' own tests do (`kubectl apply -n <ns> -f <file>`).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { KubeCluster } from './kube-cluster.js';
import { requirePeer } from './peers.js';

/** How one kubectl run ended. */
export interface KubectlRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `kubectl <args>` with the cluster's admin kubeconfig; resolves with its exit code and output either way. */
export function kubectl(cluster: KubeCluster, args: readonly string[]): Promise<KubectlRun> {
  const binary = requirePeer('KUBECTL');
  return new Promise((resolve) => {
    execFile(binary, [`--kubeconfig=${join(cluster.dir, 'kubeconfig')}`, ...args], (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `kubectl <args>`; rejects with its stderr unless it exits 0. */
export async function kubectlOk(cluster: KubeCluster, args: readonly string[]): Promise<string> {
  const run = await kubectl(cluster, args);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}
