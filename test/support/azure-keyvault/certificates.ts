// Stand-in for Azure Key Vault certificate material (test only; no real Key Vault can run
// here, see docs/conformance.md). An imported certificate in Key Vault is three objects
// sharing one version id: the certificate (`cer` = DER of the leaf, `x5t` = its SHA-1
// thumbprint), its key (public JWK) and its backing secret (the whole PFX, base64, or a PEM
// file with the private key first). Follows the Key Vault REST reference for
// CertificateBundle/KeyBundle/SecretBundle (api-version 7.6).
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The public part of a Key Vault JSON Web Key (7.6 `JsonWebKey`, no private members). */
export interface PublicJwk {
  readonly kty: 'RSA' | 'EC' | 'RSA-HSM' | 'EC-HSM';
  readonly n?: string;
  readonly e?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
}

/** PEM blocks of one type from a text, in order. */
export function pemBlocks(text: string, label: string): string[] {
  const re = new RegExp(`-----BEGIN ${label}-----[\\s\\S]*?-----END ${label}-----\\n?`, 'g');
  return (text.match(re) ?? []).map((b) => (b.endsWith('\n') ? b : `${b}\n`));
}

const CURVES: Record<string, string> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
  secp256k1: 'P-256K',
};

/** The public JWK of a key, as Key Vault returns it (`hsm` marks an HSM-protected key type). */
export function publicJwk(key: KeyObject, hsm = false): PublicJwk {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = pub.export({ format: 'jwk' });
  if (pub.asymmetricKeyType === 'rsa') return { kty: hsm ? 'RSA-HSM' : 'RSA', n: jwk.n as string, e: jwk.e as string };
  if (pub.asymmetricKeyType === 'ec') {
    const crv = CURVES[pub.asymmetricKeyDetails?.namedCurve ?? ''] ?? (jwk.crv as string);
    return { kty: hsm ? 'EC-HSM' : 'EC', crv, x: jwk.x as string, y: jwk.y as string };
  }
  throw new Error(`stand-in: key type ${String(pub.asymmetricKeyType)} is not a Key Vault key type`);
}

/** A certificate to import: the private key and the certificates, leaf first. */
export interface CertificateMaterial {
  readonly keyPem: string;
  readonly certPems: readonly string[];
}

/** What Key Vault derives from an imported certificate. */
export interface ImportedCertificate {
  readonly cer: Buffer;
  readonly x5t: string;
  readonly subject: string;
  readonly notBefore: number;
  readonly expires: number;
  readonly jwk: PublicJwk;
  readonly pkcs8Pem: string;
}

/** Parses material into what the certificate and key objects report. */
export function describeCertificate(material: CertificateMaterial): ImportedCertificate {
  const leafPem = material.certPems[0];
  if (leafPem === undefined) throw new Error('stand-in: a certificate needs at least one certificate PEM');
  const leaf = new X509Certificate(leafPem);
  const key = createPrivateKey(material.keyPem);
  if (!leaf.checkPrivateKey(key)) throw new Error('stand-in: the private key does not match the leaf certificate');
  return {
    cer: leaf.raw,
    x5t: createHash('sha1').update(leaf.raw).digest('base64url'),
    subject: leaf.subject.split('\n').join(', '),
    notBefore: Math.floor(new Date(leaf.validFrom).getTime() / 1000),
    expires: Math.floor(new Date(leaf.validTo).getTime() / 1000),
    jwk: publicJwk(key),
    pkcs8Pem: key.export({ format: 'pem', type: 'pkcs8' }) as string,
  };
}

/** The `application/x-pem-file` secret value: PKCS#8 private key first, then the certificates. */
export function pemSecretValue(material: CertificateMaterial): string {
  return describeCertificate(material).pkcs8Pem + material.certPems.join('');
}

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'akv-standin-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The `application/x-pkcs12` secret value: a password-less PFX, base64. OpenSSL's `-legacy`
 * set (3DES key bag, RC2-40 certificate bag, SHA-1 MAC), the Windows-style export the Azure
 * provider and our driver read; the exact PBE set of the real service could not be checked here.
 */
export async function pfxSecretValue(material: CertificateMaterial): Promise<string> {
  return inTempDir(async (dir) => {
    await writeFile(join(dir, 'key.pem'), material.keyPem);
    await writeFile(join(dir, 'leaf.pem'), material.certPems[0] ?? '');
    const chain = material.certPems.slice(1);
    if (chain.length > 0) await writeFile(join(dir, 'chain.pem'), chain.join(''));
    await run(
      'openssl',
      [
        'pkcs12',
        '-export',
        '-legacy',
        '-passout',
        'pass:',
        '-inkey',
        'key.pem',
        '-in',
        'leaf.pem',
        ...(chain.length > 0 ? ['-certfile', 'chain.pem'] : []),
        '-out',
        'out.pfx',
      ],
      { cwd: dir },
    );
    return (await readFile(join(dir, 'out.pfx'))).toString('base64');
  });
}

/** Key algorithm for generated test certificates. */
export type TestKeyKind = 'rsa' | 'ec';

function keyArgs(kind: TestKeyKind): string[] {
  return kind === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
}

/**
 * A root CA → intermediate → leaf chain made with openssl, for tests that import
 * certificates: `certPems` is leaf first; `keyPem` is the leaf's key.
 */
export async function makeCertificateChain(
  kind: TestKeyKind,
  leafName = 'app.example.test',
): Promise<CertificateMaterial> {
  return inTempDir(async (dir) => {
    const o = (args: string[]) => run('openssl', args, { cwd: dir });
    await o([
      'req',
      '-x509',
      ...keyArgs(kind),
      '-nodes',
      '-keyout',
      'root.key',
      '-out',
      'root.pem',
      '-days',
      '30',
      '-subj',
      '/CN=stand-in root CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    ]);
    await writeFile(join(dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n');
    await writeFile(join(dir, 'leaf.ext'), `subjectAltName=DNS:${leafName}\nextendedKeyUsage=serverAuth\n`);
    await o([
      'req',
      '-new',
      ...keyArgs(kind),
      '-nodes',
      '-keyout',
      'int.key',
      '-out',
      'int.csr',
      '-subj',
      '/CN=stand-in intermediate CA',
    ]);
    await o([
      'x509',
      '-req',
      '-in',
      'int.csr',
      '-CA',
      'root.pem',
      '-CAkey',
      'root.key',
      '-CAcreateserial',
      '-days',
      '30',
      '-extfile',
      'ca.ext',
      '-out',
      'int.pem',
    ]);
    await o([
      'req',
      '-new',
      ...keyArgs(kind),
      '-nodes',
      '-keyout',
      'leaf.key',
      '-out',
      'leaf.csr',
      '-subj',
      `/CN=${leafName}`,
    ]);
    await o([
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'int.pem',
      '-CAkey',
      'int.key',
      '-CAcreateserial',
      '-days',
      '30',
      '-extfile',
      'leaf.ext',
      '-out',
      'leaf.pem',
    ]);
    const read = (f: string) => readFile(join(dir, f), 'utf8');
    return {
      keyPem: await read('leaf.key'),
      certPems: [await read('leaf.pem'), await read('int.pem'), await read('root.pem')],
    };
  });
}
