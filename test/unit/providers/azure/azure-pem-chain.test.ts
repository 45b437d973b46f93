import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { parseKeyVaultObjects, type KeyVaultObject } from '../../../../providers/azure/objects.js';
import {
  orderCertificateChain,
  pemSecretToPem,
  pfxToPem,
  splitCertAndKey,
} from '../../../../providers/azure/pem-chain.js';
import { renderSecret, type RenderOptions } from '../../../../providers/azure/render.js';
import { decodeAllPem } from '../../../../lib/asn1/pem.js';

// Certificate-backed secrets as Azure's provider v1.8.2 writes them (decodePKCS12 with
// golang.org/x/crypto/pkcs12 ToPEM, x509.MarshalPKCS8PrivateKey, fetchCertChains):
// keys and certificates made here with the openssl command, whose PEM output (64-column
// lines, PKCS#8 "PRIVATE KEY") is byte for byte what Go's pem.EncodeToMemory writes.

let dir = '';
const file = (name: string) => readFileSync(join(dir, name), 'utf8');
function openssl(...args: string[]): Buffer {
  return execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
}
const EXT = [
  '[ca]',
  'basicConstraints=critical,CA:TRUE',
  'subjectKeyIdentifier=hash',
  'authorityKeyIdentifier=keyid',
  '[leaf]',
  'basicConstraints=CA:FALSE',
  'subjectKeyIdentifier=hash',
  'authorityKeyIdentifier=keyid',
].join('\n');

/** A key (`<name>.key`, PKCS#8) and a certificate (`<name>.pem`) signed by `issuer` (self-signed when undefined). */
function issue(name: string, issuer: string | undefined, section: string, keyAlg = 'ec', reuseKey?: string): void {
  const key = reuseKey ?? name;
  if (!reuseKey)
    openssl(
      'genpkey',
      ...(keyAlg === 'ec'
        ? ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']
        : ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']),
      '-out',
      `${key}.key`,
    );
  if (issuer === undefined) {
    openssl(
      'req',
      '-new',
      '-x509',
      '-key',
      `${key}.key`,
      '-subj',
      `/CN=${name}`,
      '-days',
      '2',
      '-config',
      'req.cnf',
      '-extensions',
      section,
      '-out',
      `${name}.pem`,
    );
  } else {
    openssl('req', '-new', '-key', `${key}.key`, '-subj', `/CN=${name}`, '-config', 'req.cnf', '-out', `${name}.csr`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}.pem`,
      '-CAkey',
      `${issuer}.key`,
      '-set_serial',
      String(Math.floor(Math.random() * 1e9)),
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
      '-extensions',
      section,
      '-out',
      `${name}.pem`,
    );
  }
}

/** A password-less PFX (base64, as Key Vault returns it) of `key`'s key; bag order: `key`'s certificate, then the others of `certs` in order. */
function pfx(key: string, certs: readonly string[], legacy: boolean, name = 'pfx'): string {
  writeFileSync(join(dir, `${name}-in.pem`), pem(...certs));
  openssl(
    'pkcs12',
    '-export',
    ...(legacy ? ['-legacy'] : []),
    '-inkey',
    `${key}.key`,
    '-in',
    `${name}-in.pem`,
    '-name',
    'friendly',
    '-passout',
    'pass:',
    '-out',
    `${name}.pfx`,
  );
  return readFileSync(join(dir, `${name}.pfx`)).toString('base64');
}

const pkcs8 = (key: string) => openssl('pkey', '-in', `${key}.key`).toString();
const pem = (...names: string[]) => names.map((n) => file(`${n}.pem`)).join('');
const blocks = (...names: string[]) => decodeAllPem(Buffer.from(pem(...names))).blocks;

function refusal(f: () => unknown): SscError {
  try {
    f();
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
      'failed-precondition',
      'CertificateUnreadable',
    ]);
    return err as SscError;
  }
  throw new Error('expected CertificateUnreadable');
}

describe('azure certificate-backed secrets (PFX/PEM → key-first PEM, chain leaf → root)', function () {
  this.timeout(60_000);
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'azure-pem-chain-'));
    writeFileSync(join(dir, 'ext.cnf'), EXT);
    writeFileSync(join(dir, 'req.cnf'), `[req]\ndistinguished_name=dn\n[dn]\n${EXT}\n`);
    issue('root', undefined, 'ca');
    issue('inter', 'root', 'ca');
    issue('leaf', 'inter', 'leaf');
    issue('rsaleaf', 'inter', 'leaf', 'rsa');
    // A cycle of key ids: x signed by y2; y (y2's key, so y2's subject key id) signed by x.
    issue('y2', undefined, 'ca');
    issue('x', 'y2', 'ca');
    issue('y', 'x', 'ca', 'ec', 'y2');
    issue('xleaf', 'x', 'leaf');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('legacy PFX (openssl -legacy: 3DES key, RC2-40 certificates), shuffled: key first as PKCS#8, then leaf, intermediate, root; bag headers dropped', () => {
    const out = pfxToPem(pfx('leaf', ['leaf', 'root', 'inter'], true), true, 'secret "tls"').toString();
    expect(out).to.equal(pkcs8('leaf') + pem('leaf', 'inter', 'root'));
    expect(out).to.not.include('friendlyName');
  });

  it("an RSA key is written as PKCS#8 too (upstream converts ToPEM's PKCS#1)", () => {
    expect(pfxToPem(pfx('rsaleaf', ['root', 'rsaleaf', 'inter'], true), true, 's').toString()).to.equal(
      pkcs8('rsaleaf') + pem('rsaleaf', 'inter', 'root'),
    );
  });

  it("--construct-pem-chain=false keeps the PFX's bag order", () => {
    expect(pfxToPem(pfx('leaf', ['leaf', 'root', 'inter'], true), false, 's').toString()).to.equal(
      pkcs8('leaf') + pem('leaf', 'root', 'inter'),
    );
  });

  it("OpenSSL 3's default PFX (AES, SHA-256 MAC) is refused as Go's pkcs12 refuses it, saying to export with -legacy", () => {
    const e = refusal(() => pfxToPem(pfx('leaf', ['leaf'], false), true, 'secret "tls" (version "v1")'));
    expect(e.message).to.match(
      /^azure provider: secret "tls" \(version "v1"\): PKCS#12: .*SHA-256 \(OpenSSL 3 default; export with -legacy\)/,
    );
  });

  it('a value that is not base64, or not PKCS#12, is named', () => {
    expect(refusal(() => pfxToPem('not base64!', true, 's')).message).to.match(/the PKCS#12 value is not base64/);
    expect(refusal(() => pfxToPem(Buffer.from('hello').toString('base64'), true, 's')).message).to.match(/: PKCS#12/);
  });

  describe('chain ordering (upstream fetchCertChains)', () => {
    const order = (...names: string[]) =>
      orderCertificateChain(blocks(...names), 's').map((b) => b.bytes.toString('base64'));
    const expected = (...names: string[]) => blocks(...names).map((b) => b.bytes.toString('base64'));
    const table: [string, string[], string[]][] = [
      ['ordered stays', ['leaf', 'inter', 'root'], ['leaf', 'inter', 'root']],
      ['root first', ['root', 'inter', 'leaf'], ['leaf', 'inter', 'root']],
      ['shuffled', ['inter', 'root', 'leaf'], ['leaf', 'inter', 'root']],
      ['incomplete (no intermediate): the original order', ['root', 'leaf'], ['root', 'leaf']],
      ['incomplete (no root) is still a full chain of what is there', ['inter', 'leaf'], ['leaf', 'inter']],
      ['one certificate', ['leaf'], ['leaf']],
    ];
    for (const [name, input, output] of table)
      it(name, () => expect(order(...input)).to.deep.equal(expected(...output)));

    it('a cycle of key ids is refused: every certificate a parent (no leaf), or a leaf leading into the cycle', () => {
      expect(refusal(() => orderCertificateChain(blocks('x', 'y'), 's')).message).to.match(/no leaf certificate/);
      expect(refusal(() => orderCertificateChain(blocks('xleaf', 'x', 'y'), 's')).message).to.match(
        /the certificate chain has a cycle/,
      );
    });

    it('a block that is not a certificate is named by its position', () => {
      expect(
        refusal(() =>
          orderCertificateChain([{ type: 'CERTIFICATE', headers: new Map(), bytes: Buffer.from('junk') }], 's'),
        ).message,
      ).to.match(/certificate 1 of the chain cannot be parsed/);
    });
  });

  describe('PEM content type (application/x-pem-file)', () => {
    it('kept byte for byte when the key is first and the chain ordered', () => {
      const value = `${pkcs8('leaf')}${pem('leaf', 'inter', 'root')}`.replace(/\n/g, '\r\n');
      expect(pemSecretToPem(value, true, 's').toString()).to.equal(value);
    });
    it('rewritten key first, chain leaf → root, when not', () => {
      expect(pemSecretToPem(pem('root', 'leaf') + pkcs8('leaf') + pem('inter'), true, 's').toString()).to.equal(
        pkcs8('leaf') + pem('leaf', 'inter', 'root'),
      );
    });
    it('as is with --construct-pem-chain=false (upstream never touches PEM)', () => {
      const value = pem('root', 'leaf') + pkcs8('leaf');
      expect(pemSecretToPem(value, false, 's').toString()).to.equal(value);
    });
  });

  describe('renderSecret', () => {
    const object = (extra = '') =>
      parseKeyVaultObjects(`array:\n  - |\n    objectName: tls\n    objectType: secret\n${extra}`)
        .objects[0] as KeyVaultObject;
    const options = (separate: boolean): RenderOptions => ({
      constructPemChain: true,
      writeCertAndKeyInSeparateFiles: separate,
    });

    it("--write-cert-and-key-in-separate-files adds .crt and .key before the object's own file", () => {
      const files = renderSecret(
        object(),
        {
          value: pfx('leaf', ['root', 'leaf', 'inter'], true),
          contentType: 'application/x-pkcs12',
          certificateBacked: true,
        },
        options(true),
        's',
      );
      expect(files.map((f) => [f.suffix, f.bytes.toString()])).to.deep.equal([
        ['.crt', pem('leaf', 'inter', 'root')],
        ['.key', pkcs8('leaf')],
        ['', pkcs8('leaf') + pem('leaf', 'inter', 'root')],
      ]);
    });

    it('objectFormat: pfx writes the base64 PFX as stored (upstream), and empty .crt/.key beside it', () => {
      const value = pfx('leaf', ['leaf'], false);
      const files = renderSecret(
        object('    objectFormat: pfx\n'),
        { value, contentType: 'application/x-pkcs12', certificateBacked: true },
        options(true),
        's',
      );
      expect(files.map((f) => [f.suffix, f.bytes.toString()])).to.deep.equal([
        ['.crt', ''],
        ['.key', ''],
        ['', value],
      ]);
      // With objectEncoding: base64 the file holds the PFX's bytes.
      expect(
        renderSecret(
          object('    objectFormat: pfx\n    objectEncoding: base64\n'),
          { value, contentType: 'application/x-pkcs12', certificateBacked: true },
          options(false),
          's',
        )[0]?.bytes.equals(Buffer.from(value, 'base64')),
      ).to.equal(true);
    });

    it("splitCertAndKey keeps each block's headers, as upstream", () => {
      const withHeader =
        '-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END EC PRIVATE KEY-----\n';
      expect(splitCertAndKey(Buffer.from(withHeader + pem('leaf'))).key.toString()).to.equal(withHeader);
    });

    it('another content type is FAILED_PRECONDITION UnsupportedContentType', () => {
      try {
        renderSecret(
          object(),
          { value: 'x', contentType: 'application/json', certificateBacked: true },
          options(false),
          'secret "tls"',
        );
        expect.fail('expected an error');
      } catch (err) {
        expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
          'failed-precondition',
          'UnsupportedContentType',
        ]);
        expect((err as SscError).message).to.equal(
          'azure provider: secret "tls" backs a certificate with content type "application/json"; only application/x-pem-file and application/x-pkcs12 can be written',
        );
      }
    });
  });
});
