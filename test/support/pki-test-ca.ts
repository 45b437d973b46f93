// Test CAs for the pki provider: self-signed CA certificates with chosen validity (an
// expired old CA, a CA valid from tomorrow), made with our X.509 builder, and `openssl`
// runs that check what the provider issued independently of our own parsing.
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  basicConstraints,
  buildCertificate,
  encodeCommonName,
  keyIdentifier,
  KEY_USAGE,
  keyUsage,
  subjectKeyIdentifier,
} from '../../lib/asn1/x509-builder.js';
import { certificatePem } from '../../providers/pki/ca.js';

const run = promisify(execFile);

/** Key algorithms a test CA can have. */
export type CaAlgorithm = 'EC-P256' | 'EC-P384' | 'RSA-2048' | 'Ed25519';

/** A test CA: its certificate and key as PEM (what a CA Secret holds). */
export interface TestCa {
  readonly certPem: string;
  readonly keyPem: string;
  readonly key: KeyObject;
  readonly der: Buffer;
}

function caKey(algorithm: CaAlgorithm): KeyObject {
  switch (algorithm) {
    case 'EC-P256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    case 'EC-P384':
      return generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    case 'RSA-2048':
      return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    case 'Ed25519':
      return generateKeyPairSync('ed25519').privateKey;
  }
}

/** A self-signed CA `cn` valid from `notBefore` to `notAfter` (seconds since the epoch); `key` reuses a key (a CA certificate renewed with its key). */
export function makeTestCa(
  cn: string,
  algorithm: CaAlgorithm,
  notBefore: number,
  notAfter: number,
  key: KeyObject = caKey(algorithm),
): TestCa {
  const name = encodeCommonName(cn);
  const serial = randomBytes(16);
  serial[0] = ((serial[0] as number) & 0x7f) | 0x01;
  const der = buildCertificate(
    {
      serial,
      issuer: name,
      subject: name,
      notBefore: new Date(notBefore * 1000),
      notAfter: new Date(notAfter * 1000),
      publicKey: key,
      extensions: [
        basicConstraints(true),
        keyUsage([KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign]),
        subjectKeyIdentifier(keyIdentifier(key)),
      ],
    },
    key,
  );
  return {
    certPem: certificatePem(der).toString('latin1'),
    keyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    key,
    der,
  };
}

/** The nodePublishSecretRef data of a CA Secret: `ca.crt` (these certificates, in order) and `ca.key`. */
export function caSecret(certificates: readonly TestCa[], signer: TestCa): Record<string, string> {
  return { 'ca.crt': certificates.map((c) => c.certPem).join(''), 'ca.key': signer.keyPem };
}

/** A temp dir for openssl's input files, removed by `done`. */
export async function opensslDir(): Promise<{
  dir: string;
  write(name: string, data: string | Buffer): Promise<string>;
  done(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'ssc-pki-'));
  return {
    dir,
    async write(name, data) {
      const path = join(dir, name);
      await writeFile(path, data);
      return path;
    },
    done: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * `openssl verify -CAfile <trusted> [-untrusted <untrusted>] [-attime <at>] <leaf>`: its
 * output, or the error output when it fails (the promise resolves either way).
 */
export async function opensslVerify(
  trusted: string,
  leaf: string,
  options: { untrusted?: string; at?: number; purpose?: string } = {},
): Promise<{ ok: boolean; output: string }> {
  const args = [
    'verify',
    '-CAfile',
    trusted,
    ...(options.untrusted ? ['-untrusted', options.untrusted] : []),
    ...(options.at === undefined ? [] : ['-attime', String(options.at)]),
    ...(options.purpose ? ['-purpose', options.purpose] : []),
    leaf,
  ];
  try {
    const { stdout, stderr } = await run('openssl', args);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** `openssl x509 -noout -text` of the first certificate in `path`. */
export async function opensslText(path: string): Promise<string> {
  return (await run('openssl', ['x509', '-noout', '-text', '-in', path])).stdout;
}
