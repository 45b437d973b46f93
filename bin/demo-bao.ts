// Which OpenBao `bao` the demo's vault part runs. The test peers' copy comes first: it is
// the pinned version the tests run (test/peers/install.sh openbao puts it in the peers
// cache and lists it as BAO in peers.env); else the first `bao` on PATH.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { peersCacheDir } from './local-peers.js';

/** A `bao` binary and where it was found, for the demo's output. */
export interface BaoLocation {
  readonly path: string;
  readonly from: 'the test peers' | 'PATH';
}

/** The one line the demo prints when it finds no bao. */
export const NO_BAO_LINE =
  'vault: skipped, no OpenBao `bao` found: bash test/peers/install.sh openbao installs it (or put bao on PATH)';

/** The file-system port of findBao. */
export interface BaoFiles {
  /** The text of a file, or undefined when it cannot be read. */
  readText(path: string): string | undefined;
  isExecutable(path: string): boolean;
}

/** The BAO entry of a peers.env text (KEY=path lines), or undefined. */
export function baoFromPeersEnv(text: string): string | undefined {
  for (const l of text.split('\n')) {
    const m = /^BAO=(.+)$/.exec(l.trim());
    if (m?.[1]) return m[1];
  }
  return undefined;
}

/**
 * The bao the demo runs: BAO of <peers cache>/peers.env when it is executable (the cache
 * is $SSC_PEERS_CACHE, else ~/.cache/secrets-store-csi/peers, as install.sh has it), else
 * the first executable `bao` in $PATH; undefined when there is neither.
 */
export function findBao(env: NodeJS.ProcessEnv, home: string, files: BaoFiles): BaoLocation | undefined {
  const cache = peersCacheDir(env, home);
  const peer = baoFromPeersEnv(files.readText(join(cache, 'peers.env')) ?? '');
  if (peer && files.isExecutable(peer)) return { path: peer, from: 'the test peers' };
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'bao');
    if (files.isExecutable(candidate)) return { path: candidate, from: 'PATH' };
  }
  return undefined;
}

/** The real file system for findBao. */
export const LOCAL_FILES: BaoFiles = {
  readText(path) {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
  isExecutable(path) {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
};

/** findBao for this process. */
export function locateBao(): BaoLocation | undefined {
  return findBao(process.env, homedir(), LOCAL_FILES);
}
