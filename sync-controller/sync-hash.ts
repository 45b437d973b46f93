import { createHmac, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const pbkdf2Async = promisify(pbkdf2);

/** What a sync's outcome depends on besides the data: which objects, at which generation. */
export interface HashInputs {
  readonly classUid: string;
  readonly classGeneration: number;
  readonly syncUid: string;
  readonly syncGeneration: number;
  readonly forceSynchronization: string;
}

/** Upstream's key derivation parameters: PBKDF2-SHA512, 100,000 rounds, 32 bytes. */
const ROUNDS = 100_000;
const KEY_BYTES = 32;

/** The Secret data as Go's encoding/json writes a map[string][]byte: sorted keys, base64 values. */
function goJsonOfData(data: ReadonlyMap<string, Buffer>): string {
  const sorted: Record<string, string> = {};
  for (const key of [...data.keys()].sort()) sorted[key] = (data.get(key) as Buffer).toString('base64');
  return JSON.stringify(sorted);
}

/**
 * status.syncHash, computed as upstream computes it (so a SecretSync taken over from
 * upstream's controller is not rewritten): PBKDF2 over the length-prefixed data and the
 * class's and SecretSync's UID and generation plus forceSynchronization, salted with the
 * SecretSync's UID. A slow derivation, not a plain hash, so the status does not make
 * guessing a low-entropy secret cheap. Runs on libuv's thread pool, off the event loop.
 */
export async function syncHash(data: ReadonlyMap<string, Buffer>, inputs: HashInputs): Promise<string> {
  const key = await pbkdf2Async(hashInput(data, inputs), Buffer.from(inputs.syncUid), ROUNDS, KEY_BYTES, 'sha512');
  return `v1:${key.toString('hex')}`;
}

/** What upstream derives the hash from: the length-prefixed data, then the object identities. */
function hashInput(data: ReadonlyMap<string, Buffer>, inputs: HashInputs): Buffer {
  const secretBytes = Buffer.from(goJsonOfData(data));
  const toHash = [
    inputs.classUid,
    String(inputs.classGeneration),
    inputs.syncUid,
    String(inputs.syncGeneration),
    inputs.forceSynchronization,
  ].join('|');
  return Buffer.concat([Buffer.from(`${secretBytes.length}:`), secretBytes, Buffer.from(toHash)]);
}

/** SecretSyncs whose last hash is remembered (least recently hashed forgotten first). */
const REMEMBERED = 100_000;

/**
 * syncHash with the last result per SecretSync remembered: a poll that finds the same data
 * and objects (the usual case) costs an HMAC-SHA256 instead of 100,000 PBKDF2 rounds. The
 * remembered fingerprint is keyed with a random per-process key, held only in memory, and
 * compared, never shown.
 */
export class SyncHashes {
  private readonly key = randomBytes(32);
  private readonly last = new Map<string, { fingerprint: string; hash: string }>();
  /** PBKDF2 derivations made (hashes not answered from memory). */
  derivations = 0;

  constructor(private readonly remembered = REMEMBERED) {}

  /** The hash syncHash gives for `data` and `inputs`. */
  async hash(data: ReadonlyMap<string, Buffer>, inputs: HashInputs): Promise<string> {
    const input = hashInput(data, inputs);
    const fingerprint = createHmac('sha256', this.key).update(input).update(inputs.syncUid).digest('hex');
    const known = this.last.get(inputs.syncUid);
    this.last.delete(inputs.syncUid);
    if (known?.fingerprint === fingerprint) {
      this.last.set(inputs.syncUid, known);
      return known.hash;
    }
    this.derivations++;
    const derived = await pbkdf2Async(input, Buffer.from(inputs.syncUid), ROUNDS, KEY_BYTES, 'sha512');
    const hash = `v1:${derived.toString('hex')}`;
    this.last.set(inputs.syncUid, { fingerprint, hash });
    for (const uid of this.last.keys()) {
      if (this.last.size <= this.remembered) break;
      this.last.delete(uid);
    }
    return hash;
  }

  /** How many SecretSyncs have a remembered hash. */
  get size(): number {
    return this.last.size;
  }
}
