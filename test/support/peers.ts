import { peerBinary } from '../../bin/local-peers.js';

// The peers' cache and peers.env are read by bin/local-peers.ts (the demo-sync command uses them too).
export { peerBinary, peersCacheDir } from '../../bin/local-peers.js';

/** Like peerBinary, but fails the test with a clear message when the peer is missing. */
export function requirePeer(key: string): string {
  const path = peerBinary(key);
  if (!path) throw new Error(`test peer ${key} is not installed: run bash test/peers/install.sh`);
  return path;
}
