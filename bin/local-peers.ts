// The third-party programs test/peers/install.sh builds into a per-user cache (etcd,
// kube-apiserver, kubectl, …), found through the cache's peers.env. The tests run against
// them, and `demo-sync` starts a local control plane from them.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where test/peers/install.sh caches peers (same default as the script). */
export function peersCacheDir(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return env['SSC_PEERS_CACHE'] || join(home, '.cache', 'secrets-store-csi', 'peers');
}

/**
 * Absolute path of an installed peer binary from peers.env (CSI_SANITY, ETCD,
 * KUBE_APISERVER, …), or undefined when it is not installed.
 */
export function peerBinary(key: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const envFile = join(peersCacheDir(env), 'peers.env');
  if (!existsSync(envFile)) return undefined;
  for (const line of readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m && m[1] === key && m[2] && existsSync(m[2])) return m[2];
  }
  return undefined;
}
