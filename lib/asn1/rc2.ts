// RC2 decryption (RFC 2268), for PKCS#12 files encrypted with pbeWithSHAAnd40BitRC2-CBC:
// what `openssl pkcs12 -export -legacy` and Windows use for certificates, and what
// upstream decrypts. Node's OpenSSL 3 has no RC2 without the legacy provider.

// RFC 2268 section 2: PITABLE, a permutation of 0..255 based on the digits of pi.
const PITABLE = Buffer.from(
  'd978f9c419ddb5ed28e9fd794aa0d89dc67e37832b76538e624c6488448bfba2' +
    '179a59f587b34f1361456d8d09817d32bd8f40eb86b77b0bf09521225c6b4e82' +
    '54d66593ce60b21c7356c014a78cf1dc1275ca1f3bbee4d1423dd430a33cb626' +
    '6fbf0eda4669075727f21d9bbc944303f811c7f690ef3ee706c3d52fc8661ed7' +
    '08e8eade8052eef784aa72ac354d6a2a961ad2715a1549744b9fd05e0418a4ec' +
    'c2e0416e0f51cbcc2491af50a1f47039997c3a8523b8b47afc02365b25559731' +
    '2d5dfa98e38a92ae05df2910676cbac9d300e6cfe19ea82c6316013f58e289a9' +
    '0d38341bab33ffb0bb480c5fb9b1cd2ec5f3db47e5a59c770aa62068fe7fc1ad',
  'hex',
);

/** RFC 2268 section 2: the 64 16-bit subkeys for `key` with `effectiveBits` (T1). */
export function rc2ExpandKey(key: Buffer, effectiveBits: number): Uint16Array {
  if (key.length < 1 || key.length > 128) throw new RangeError('RC2 key must be 1 to 128 bytes');
  if (effectiveBits < 1 || effectiveBits > 1024) throw new RangeError('RC2 effective key bits must be 1 to 1024');
  const l = new Uint8Array(128);
  l.set(key);
  const t = key.length;
  for (let i = t; i < 128; i++) l[i] = PITABLE[((l[i - 1] as number) + (l[i - t] as number)) & 0xff] as number;
  const t8 = (effectiveBits + 7) >> 3;
  const tm = 0xff >> (8 * t8 - effectiveBits);
  l[128 - t8] = PITABLE[(l[128 - t8] as number) & tm] as number;
  for (let i = 127 - t8; i >= 0; i--) l[i] = PITABLE[(l[i + 1] as number) ^ (l[i + t8] as number)] as number;
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i++) k[i] = (l[2 * i] as number) | ((l[2 * i + 1] as number) << 8);
  return k;
}

const SHIFTS = [1, 2, 3, 5] as const;

/** Decrypts one 8-byte block in place (RFC 2268 section 4). */
function decryptBlock(k: Uint16Array, block: Uint8Array): void {
  const r = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) r[i] = (block[2 * i] as number) | ((block[2 * i + 1] as number) << 8);
  let j = 63;
  const mixRound = () => {
    for (let i = 3; i >= 0; i--) {
      const s = SHIFTS[i] as number;
      const v = r[i] as number;
      r[i] = ((v >>> s) | (v << (16 - s))) & 0xffff;
      const a = r[(i + 3) % 4] as number;
      const b = r[(i + 2) % 4] as number;
      const c = r[(i + 1) % 4] as number;
      r[i] = ((r[i] as number) - (k[j--] as number) - (a & b) - (~a & c)) & 0xffff;
    }
  };
  const mashRound = () => {
    for (let i = 3; i >= 0; i--) r[i] = ((r[i] as number) - (k[(r[(i + 3) % 4] as number) & 63] as number)) & 0xffff;
  };
  for (let n = 0; n < 5; n++) mixRound();
  mashRound();
  for (let n = 0; n < 6; n++) mixRound();
  mashRound();
  for (let n = 0; n < 5; n++) mixRound();
  for (let i = 0; i < 4; i++) {
    block[2 * i] = (r[i] as number) & 0xff;
    block[2 * i + 1] = (r[i] as number) >> 8;
  }
}

/** RC2-CBC decryption without padding removal; `data` must be whole 8-byte blocks. */
export function rc2CbcDecrypt(key: Buffer, effectiveBits: number, iv: Buffer, data: Buffer): Buffer {
  if (iv.length !== 8 || data.length % 8 !== 0)
    throw new RangeError('RC2-CBC needs an 8-byte IV and whole 8-byte blocks');
  const k = rc2ExpandKey(key, effectiveBits);
  const out = Buffer.alloc(data.length);
  let previous: Uint8Array = iv;
  for (let at = 0; at < data.length; at += 8) {
    const cipherBlock = data.subarray(at, at + 8);
    const block = Uint8Array.from(cipherBlock);
    decryptBlock(k, block);
    for (let i = 0; i < 8; i++) out[at + i] = (block[i] as number) ^ (previous[i] as number);
    previous = cipherBlock;
  }
  return out;
}
