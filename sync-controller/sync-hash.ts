import { pbkdf2 } from 'node:crypto';
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
  const secretBytes = Buffer.from(goJsonOfData(data));
  const toHash = [
    inputs.classUid,
    String(inputs.classGeneration),
    inputs.syncUid,
    String(inputs.syncGeneration),
    inputs.forceSynchronization,
  ].join('|');
  const input = Buffer.concat([Buffer.from(`${secretBytes.length}:`), secretBytes, Buffer.from(toHash)]);
  const key = await pbkdf2Async(input, Buffer.from(inputs.syncUid), ROUNDS, KEY_BYTES, 'sha512');
  return `v1:${key.toString('hex')}`;
}
