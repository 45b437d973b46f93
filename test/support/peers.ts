import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where test/peers/install.sh caches peers (same default as the script). */
export function peersCacheDir(): string {
  return process.env['SSC_PEERS_CACHE'] ?? join(homedir(), '.cache', 'secrets-store-csi', 'peers');
}

/**
 * Absolute path of an installed peer binary from peers.env (CSI_SANITY,
 * UPSTREAM_FAKE_PROVIDER, …), or undefined when it is not installed.
 */
export function peerBinary(key: string): string | undefined {
  const envFile = join(peersCacheDir(), 'peers.env');
  if (!existsSync(envFile)) return undefined;
  for (const line of readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m && m[1] === key && m[2] && existsSync(m[2])) return m[2];
  }
  return undefined;
}

/** Like peerBinary, but fails the test with a clear message when the peer is missing. */
export function requirePeer(key: string): string {
  const path = peerBinary(key);
  if (!path) throw new Error(`test peer ${key} is not installed: run bash test/peers/install.sh`);
  return path;
}
