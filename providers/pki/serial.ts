// The leaf certificate's serial number carries what a stateless renewal decision needs,
// so the provider keeps no state across restarts: the mounted version (the serial, in
// hex) says when the certificate was valid from and until and which CA signed it.
//
// Layout, 20 octets (RFC 5280's maximum), a positive INTEGER since the first octet is 0x01:
//   [0]      format 0x01
//   [1..4]   notBefore, seconds since the Unix epoch (uint32, big-endian)
//   [5..8]   notAfter, likewise
//   [9..12]  the first 4 octets of the signing CA certificate's SHA-256
//   [13..19] 7 random octets (serials of one CA must be unique)

/** The first octet of every serial this provider writes. */
const FORMAT = 0x01;
/** Octets of a serial. */
export const SERIAL_LENGTH = 20;

/** What a serial says about its certificate. */
export interface SerialFacts {
  /** Seconds since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
  /** 4 octets of the signer certificate's SHA-256, as 8 hex digits. */
  readonly signerTag: string;
}

/** The serial for `facts`, with `random` (7 octets) for uniqueness. */
export function encodeSerial(facts: SerialFacts, random: Buffer): Buffer {
  if (random.length !== 7) throw new RangeError('a serial takes 7 random octets');
  if (!/^[0-9a-f]{8}$/.test(facts.signerTag)) throw new RangeError('signerTag must be 8 lowercase hex digits');
  for (const t of [facts.notBefore, facts.notAfter])
    if (!Number.isInteger(t) || t < 0 || t > 0xffffffff) throw new RangeError('times must fit 32 bits');
  const out = Buffer.alloc(SERIAL_LENGTH);
  out[0] = FORMAT;
  out.writeUInt32BE(facts.notBefore, 1);
  out.writeUInt32BE(facts.notAfter, 5);
  Buffer.from(facts.signerTag, 'hex').copy(out, 9);
  random.copy(out, 13);
  return out;
}

/** The version string of a serial: lowercase hex, 40 digits. */
export function serialVersion(serial: Buffer): string {
  return serial.toString('hex');
}

/** The facts of a mounted version; undefined when it is not a serial this provider wrote (then the certificate is issued anew). */
export function decodeSerialVersion(version: string): SerialFacts | undefined {
  if (!/^[0-9a-f]{40}$/.test(version)) return undefined;
  const bytes = Buffer.from(version, 'hex');
  if (bytes[0] !== FORMAT) return undefined;
  const notBefore = bytes.readUInt32BE(1);
  const notAfter = bytes.readUInt32BE(5);
  if (notAfter <= notBefore) return undefined;
  return { notBefore, notAfter, signerTag: bytes.subarray(9, 13).toString('hex') };
}
