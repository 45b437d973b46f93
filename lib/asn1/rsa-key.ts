import {
  encodeInteger,
  encodeSequence,
  integer,
  isUniversal,
  readOne,
  sequence,
  smallInteger,
  TAG,
  type Tlv,
} from './der.js';
import { TlsInputError } from './tls-input-error.js';

// An RSA private key as upstream accepts and writes it: Go's x509.ParsePKCS1PrivateKey
// (with the consistency checks crypto/rsa makes) and x509.MarshalPKCS1PrivateKey.

/** The integers of a PKCS#1 RSAPrivateKey; `others` holds a multi-prime key's extra primes. */
export interface RsaKey {
  readonly n: bigint;
  readonly e: bigint;
  readonly d: bigint;
  readonly p: bigint;
  readonly q: bigint;
  readonly dp: bigint;
  readonly dq: bigint;
  readonly qinv: bigint;
  readonly others: readonly bigint[];
}

function invalid(problem: string): TlsInputError {
  return new TlsInputError(`RSA private key: ${problem}`);
}

function mod(a: bigint, m: bigint): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

function modInverse(a: bigint, m: bigint): bigint | undefined {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const quotient = oldR / r;
    [oldR, r] = [r, oldR - quotient * r];
    [oldS, s] = [s, oldS - quotient * s];
  }
  return oldR === 1n ? mod(oldS, m) : undefined;
}

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

/**
 * Parses DER as PKCS#1 RSAPrivateKey. Throws TlsInputError where Go's parser fails:
 * not that structure, version > 1, a value ≤ 0, or a key crypto/rsa finds inconsistent.
 */
export function parsePkcs1(der: Buffer): RsaKey {
  const fields = sequence(readOne(der, 'PKCS#1 RSA private key'), 'PKCS#1 RSA private key');
  const version = smallInteger(fields[0], 'PKCS#1 RSA private key version');
  // dp, dq and qinv are optional in Go's structure.
  const crtGiven = fields.slice(6, 9).filter((f) => isUniversal(f, TAG.INTEGER)).length;
  const values = fields.slice(1, 6 + crtGiven).map((f) => integer(f, 'PKCS#1 RSA private key'));
  if (values.length < 5) throw invalid('truncated');
  const others = otherPrimes(fields[6 + crtGiven]);
  const [n, e, d, p, q] = values as [bigint, bigint, bigint, bigint, bigint];
  if (version > 1) throw invalid('unsupported version');
  if (e < -(1n << 63n) || e >= 1n << 63n) throw invalid('public exponent too large');
  if ([n, d, p, q, ...values.slice(5)].some((v) => v <= 0n)) throw invalid('contains zero or negative value');
  if (others.some((v) => v <= 0n)) throw invalid('contains zero or negative prime');
  if (others.length > 0) return recomputeMultiPrime({ n, e, d, p, q, dp: 0n, dq: 0n, qinv: 0n, others });
  if (p <= 1n || q <= 1n) throw invalid('invalid prime');
  // Fewer than all three CRT values: crypto/rsa computes all three from d, p and q.
  const [dp, dq, qinv] =
    crtGiven === 3
      ? (values.slice(5) as [bigint, bigint, bigint])
      : [mod(d, p - 1n), mod(d, q - 1n), modInverse(q, p) ?? 0n];
  return checkTwoPrime({ n, e, d, p, q, dp, dq, qinv, others });
}

function otherPrimes(extra: Tlv | undefined): bigint[] {
  if (!isUniversal(extra, TAG.SEQUENCE)) return [];
  return sequence(extra, 'PKCS#1 RSA private key otherPrimeInfos').map((info) => {
    const prime = sequence(info, 'PKCS#1 RSA private key otherPrimeInfo');
    if (prime.length < 3) throw invalid('truncated otherPrimeInfo');
    const [r] = prime.slice(0, 3).map((f) => integer(f, 'PKCS#1 RSA private key otherPrimeInfo'));
    return r as bigint;
  });
}

function checkPublic(n: bigint, e: bigint): void {
  if (n % 2n === 0n) throw invalid('public modulus is even');
  if (e < 2n) throw invalid('public exponent too small or negative');
  if (e % 2n === 0n) throw invalid('public exponent is even');
  if (e > (1n << 31n) - 1n) throw invalid('public exponent too large');
}

// crypto/rsa's checks of a two-prime key with its CRT values (they are kept as given).
function checkTwoPrime(key: RsaKey): RsaKey {
  const { n, e, d, p, q, dp, dq, qinv } = key;
  checkPublic(n, e);
  if (p >= n || q >= n) throw invalid('invalid prime');
  if (p * q !== n) throw invalid('p * q != n');
  if (dp >= p - 1n || mod(dp * e, p - 1n) !== 1n) throw invalid('invalid CRT exponent');
  if (dq >= q - 1n || mod(dq * e, q - 1n) !== 1n) throw invalid('invalid CRT exponent');
  if (qinv >= p || mod(q * qinv, p) !== 1n) throw invalid('invalid CRT coefficient');
  if (mod(d, p - 1n) !== dp || mod(d, q - 1n) !== dq) throw invalid('d does not match its CRT exponents');
  if (p === q) throw invalid('p == q');
  const diff = p > q ? p - q : q - p;
  if (bitLength(diff) <= Math.floor(bitLength(n) / 2) - 100) throw invalid('|p - q| too small');
  if (bitLength(d) <= Math.floor(bitLength(n) / 2)) throw invalid('d too small');
  return key;
}

// Multi-prime keys (deprecated): crypto/rsa checks the public part and recomputes
// every CRT value from d and the primes, ignoring the ones in the file.
function recomputeMultiPrime(key: RsaKey): RsaKey {
  const { n, e, d, p, q, others } = key;
  checkPublic(n, e);
  if ([p, q, ...others].some((prime) => prime <= 1n)) throw invalid('prime factor is <= 1');
  const qinv = modInverse(q, p);
  let r = p * q;
  for (const prime of others) {
    if (modInverse(r, prime) === undefined) throw invalid('prime factors are not relatively prime');
    r *= prime;
  }
  if (qinv === undefined) throw invalid('prime factors are not relatively prime');
  return { ...key, dp: mod(d, p - 1n), dq: mod(d, q - 1n), qinv };
}

/** PKCS#1 DER of `key` as Go's MarshalPKCS1PrivateKey writes it (version 1 for multi-prime). */
export function encodePkcs1(key: RsaKey): Buffer {
  const { n, e, d, p, q, dp, dq, qinv, others } = key;
  const parts = [encodeInteger(others.length > 0 ? 1n : 0n), ...[n, e, d, p, q, dp, dq, qinv].map(encodeInteger)];
  if (others.length > 0) {
    let r = p * q;
    const infos = others.map((prime) => {
      const info = encodeSequence([
        encodeInteger(prime),
        encodeInteger(mod(d, prime - 1n)),
        encodeInteger(modInverse(r, prime) as bigint),
      ]);
      r *= prime;
      return info;
    });
    parts.push(encodeSequence(infos));
  }
  return encodeSequence(parts);
}
