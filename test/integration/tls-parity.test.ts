import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildSecretData, TLS_SECRET_TYPE } from '../../driver/secret-sync/secret-data.js';
import { SscError } from '../../lib/errors.js';
import { requirePeer } from '../support/peers.js';

// kubernetes.io/tls parity with upstream v1.6.1: objects made here with openssl (keys in
// every encoding, chains, PEM quirks, PKCS#12 files) go through upstream's own code
// (secretutil.GetSecretData, in the upstream-driver-facts peer) and through ours; the
// Secret bytes must be equal, or both must refuse. Where upstream writes an unusable
// key (an empty "PRIVATE KEY" block) we refuse: those cases are listed as such.

type Expectation = 'same' | 'refused' | 'upstream-writes-empty-key';

interface Vector {
  readonly name: string;
  readonly file: string;
  readonly crt: Expectation;
  readonly key: Expectation;
}

const EMPTY_KEY_BLOCK = '-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n';

function openssl(dir: string, args: string[], input?: string): Buffer {
  return execFileSync('openssl', args, { cwd: dir, input, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** PKCS#12 export with the empty password; `-legacy` where this openssl has it (3.x). */
function pkcs12(dir: string, out: string, args: string[], legacy = true): string {
  const base = ['pkcs12', '-export', '-passout', 'pass:', '-out', out, ...args];
  try {
    openssl(dir, legacy ? [...base, '-legacy'] : base);
  } catch (err) {
    if (!legacy || !/legacy/.test(String((err as { stderr?: Buffer }).stderr))) throw err;
    openssl(dir, base);
  }
  return out;
}

function makeVectors(dir: string): Vector[] {
  const w = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return name;
  };
  const r = (name: string) => readFileSync(join(dir, name), 'latin1');
  const genpkey = (out: string, ...opts: string[]) => {
    openssl(dir, ['genpkey', '-out', out, ...opts]);
    return r(out);
  };
  const cert = (key: string, cn: string) =>
    openssl(dir, ['req', '-x509', '-new', '-key', key, '-subj', `/CN=${cn}`, '-days', '2']).toString('latin1');

  const rsa = genpkey('rsa.pem', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048');
  const rsaPkcs1 = openssl(dir, ['rsa', '-traditional', '-in', 'rsa.pem']).toString('latin1');
  const p256 = genpkey('p256.pem', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256');
  const p384Sec1 = openssl(dir, ['ecparam', '-genkey', '-name', 'secp384r1']).toString('latin1'); // EC PARAMETERS + EC PRIVATE KEY
  w('p384.pem', p384Sec1);
  const p521 = genpkey('p521.pem', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521');
  const p224 = genpkey('p224.pem', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-224');
  const compressed = openssl(dir, ['ec', '-in', 'p256.pem', '-conv_form', 'compressed']).toString('latin1');
  const noPublic = openssl(dir, ['ec', '-in', 'p256.pem', '-no_public']).toString('latin1');
  const rsa512 = genpkey('rsa512.pem', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:512');
  const rsa3 = genpkey(
    'rsa3.pem',
    '-algorithm',
    'RSA',
    '-pkeyopt',
    'rsa_keygen_bits:1024',
    '-pkeyopt',
    'rsa_keygen_primes:3',
  );
  const ed25519 = genpkey('ed25519.pem', '-algorithm', 'ED25519');
  const k1 = genpkey('k1.pem', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:secp256k1');
  const pss = genpkey('pss.pem', '-algorithm', 'RSA-PSS', '-pkeyopt', 'rsa_keygen_bits:1024');
  const encPkcs8 = openssl(dir, ['pkey', '-in', 'rsa.pem', '-aes256', '-passout', 'pass:pw']).toString('latin1');
  const encTraditional = openssl(dir, [
    'rsa',
    '-in',
    'rsa.pem',
    '-traditional',
    '-aes128',
    '-passout',
    'pass:pw',
  ]).toString('latin1');

  const leaf = cert('rsa.pem', 'leaf');
  const inter = cert('p256.pem', 'intermediate');
  const root = cert('p521.pem', 'root');
  w('leaf.pem', leaf);
  w('chain.pem', inter + root);
  const ecLeaf = cert('p256.pem', 'ec-leaf');
  w('ec-leaf.pem', ecLeaf);
  w('ed-leaf.pem', cert('ed25519.pem', 'ed'));
  const rewrap = (pemText: string, width: number) =>
    pemText.replace(
      /\n([A-Za-z0-9+/=\n]+)\n-----END/g,
      (_m, body: string) =>
        `\n${body
          .replace(/\n/g, '')
          .match(new RegExp(`.{1,${width}}`, 'g'))
          ?.join('\n')}\n-----END`,
    );
  const withHeaders = leaf.replace(
    '-----BEGIN CERTIFICATE-----\n',
    '-----BEGIN CERTIFICATE-----\nZeta: last\nProc-Type: 4,TEST\nAlpha:  first \n\n',
  );
  const badBase64 = inter.replace(/\n(.{10})/, '\n!$1');
  const nodes = (pfx: string) =>
    openssl(dir, [
      'pkcs12',
      '-in',
      pfx,
      '-nodes',
      '-passin',
      'pass:',
      ...(pfx.includes('legacy') ? ['-legacy'] : []),
    ]).toString('latin1');

  const v = (name: string, text: string, crt: Expectation, key: Expectation): Vector => ({
    name,
    file: w(`${name}.obj`, text),
    crt,
    key,
  });
  const f = (name: string, file: string, crt: Expectation, key: Expectation): Vector => ({ name, file, crt, key });
  const legacyRsa = pkcs12(dir, 'legacy-rsa.pfx', [
    '-inkey',
    'rsa.pem',
    '-in',
    'leaf.pem',
    '-certfile',
    'chain.pem',
    '-name',
    'my cert',
  ]);
  return [
    v('RSA PKCS#8 key first, then a chain', rsa + leaf + inter + root, 'same', 'same'),
    v('leaf, RSA PKCS#1 key, chain', leaf + rsaPkcs1 + inter + root, 'same', 'same'),
    v('CRLF line endings', (rsa + leaf + inter).replace(/\n/g, '\r\n'), 'same', 'same'),
    v('base64 wrapped at 76 columns', rewrap(rsa + leaf + inter, 76), 'same', 'same'),
    v('no final newline and blank lines between blocks', `${leaf}\n\n${rsa}\n${inter}`.trimEnd(), 'same', 'same'),
    v('a certificate with PEM headers', withHeaders + rsa, 'same', 'same'),
    v('a certificate with bad base64 (skipped)', leaf + badBase64 + root + rsa, 'same', 'same'),
    v('two keys (the last one wins)', rsa + leaf + p256, 'same', 'same'),
    v('EC P-256 PKCS#8', ecLeaf + p256, 'same', 'same'),
    v('EC P-384 from ecparam (EC PARAMETERS block first)', ecLeaf + p384Sec1, 'same', 'same'),
    v('EC P-521 PKCS#8', ecLeaf + p521, 'same', 'same'),
    v('EC P-224 PKCS#8', ecLeaf + p224, 'same', 'same'),
    v('EC SEC1 with a compressed public point', ecLeaf + compressed, 'same', 'same'),
    v('EC SEC1 without a public point', ecLeaf + noPublic, 'same', 'same'),
    v('RSA 512-bit', leaf + rsa512, 'same', 'same'),
    v('RSA with three primes', leaf + rsa3, 'same', 'same'),
    v('openssl pkcs12 -nodes output (Bag Attributes text)', nodes(legacyRsa), 'same', 'same'),
    v('a key only', rsa, 'refused', 'same'),
    v('certificates only', leaf + inter, 'same', 'refused'),
    v('Ed25519', leaf + ed25519, 'same', 'refused'),
    v('secp256k1', leaf + k1, 'same', 'upstream-writes-empty-key'),
    v('RSA-PSS', leaf + pss, 'same', 'upstream-writes-empty-key'),
    v('an encrypted PKCS#8 key', leaf + encPkcs8, 'same', 'upstream-writes-empty-key'),
    v('an encrypted traditional key', leaf + encTraditional, 'same', 'upstream-writes-empty-key'),
    v(
      'a key followed by an EC PARAMETERS block',
      leaf + rsa + p384Sec1.slice(0, p384Sec1.indexOf('-----BEGIN EC PRIVATE KEY')),
      'same',
      'upstream-writes-empty-key',
    ),
    v('neither PEM nor PKCS#12', 'just text\n', 'refused', 'refused'),
    f('PKCS#12 -legacy, RSA, chain, friendlyName', legacyRsa, 'same', 'same'),
    f(
      'PKCS#12 -legacy, EC',
      pkcs12(dir, 'legacy-ec.pfx', ['-inkey', 'p256.pem', '-in', 'ec-leaf.pem']),
      'same',
      'same',
    ),
    f(
      'PKCS#12 3DES for both bags, SHA-1 MAC',
      pkcs12(
        dir,
        '3des.pfx',
        [
          '-inkey',
          'rsa.pem',
          '-in',
          'leaf.pem',
          '-certpbe',
          'PBE-SHA1-3DES',
          '-keypbe',
          'PBE-SHA1-3DES',
          '-macalg',
          'sha1',
        ],
        false,
      ),
      'same',
      'same',
    ),
    f(
      'PKCS#12 RC2-40 for both bags',
      pkcs12(dir, 'rc2.pfx', [
        '-inkey',
        'p256.pem',
        '-in',
        'ec-leaf.pem',
        '-keypbe',
        'PBE-SHA1-RC2-40',
        '-certpbe',
        'PBE-SHA1-RC2-40',
      ]),
      'same',
      'same',
    ),
    f(
      'PKCS#12 OpenSSL 3 default (PBES2, SHA-256 MAC)',
      pkcs12(dir, 'modern.pfx', ['-inkey', 'rsa.pem', '-in', 'leaf.pem'], false),
      'refused',
      'refused',
    ),
    f(
      'PKCS#12 with an unencrypted key bag',
      pkcs12(dir, 'nokeypbe.pfx', ['-inkey', 'rsa.pem', '-in', 'leaf.pem', '-keypbe', 'NONE', '-certpbe', 'NONE']),
      'refused',
      'refused',
    ),
    f(
      'PKCS#12 without a MAC',
      pkcs12(dir, 'nomac.pfx', ['-inkey', 'rsa.pem', '-in', 'leaf.pem', '-nomac']),
      'refused',
      'refused',
    ),
    f(
      'PKCS#12 with an Ed25519 key',
      pkcs12(dir, 'ed.pfx', ['-inkey', 'ed25519.pem', '-in', 'ed-leaf.pem']),
      'refused',
      'refused',
    ),
    f(
      'PKCS#12 with a password',
      (() => {
        openssl(dir, [
          'pkcs12',
          '-export',
          '-legacy',
          '-passout',
          'pass:secret',
          '-inkey',
          'rsa.pem',
          '-in',
          'leaf.pem',
          '-out',
          'pw.pfx',
        ]);
        return 'pw.pfx';
      })(),
      'refused',
      'refused',
    ),
  ];
}

type Outcome = { ok: true; bytes: Buffer } | { ok: false; message: string };

function upstream(facts: string, dir: string, file: string, key: string): Outcome {
  const request = { type: TLS_SECRET_TYPE, data: [{ objectName: 'obj', key }], files: { obj: join(dir, file) } };
  const reply = JSON.parse(execFileSync(facts, ['secret-data'], { input: JSON.stringify(request) }).toString()) as {
    data?: Record<string, string>;
    error?: string;
  };
  return reply.error === undefined
    ? { ok: true, bytes: Buffer.from(reply.data?.[key] ?? '', 'base64') }
    : { ok: false, message: reply.error };
}

function ours(dir: string, file: string, key: 'tls.crt' | 'tls.key'): Outcome {
  // Both keys are required by our buildSecretData; the other one reads a known-good object.
  const other = key === 'tls.crt' ? 'tls.key' : 'tls.crt';
  const object = {
    secretName: 'web-tls',
    type: TLS_SECRET_TYPE,
    labels: {},
    annotations: {},
    data: [
      { objectName: 'obj', key },
      { objectName: 'good', key: other },
    ],
  };
  try {
    const data = buildSecretData(
      object,
      new Map([
        ['obj', readFileSync(join(dir, file))],
        ['good', readFileSync(join(dir, 'good.obj'))],
      ]),
    );
    return { ok: true, bytes: data.get(key) as Buffer };
  } catch (err) {
    if (!(err instanceof SscError)) throw err;
    return { ok: false, message: err.message };
  }
}

describe('kubernetes.io/tls Secret data equals upstream v1.6.1 (openssl vectors, upstream-driver-facts peer)', function () {
  this.timeout(120_000);
  let dir: string;
  let facts: string;
  let vectors: Vector[] = [];

  before(function () {
    facts = requirePeer('UPSTREAM_DRIVER_FACTS');
    dir = mkdtempSync(join(tmpdir(), 'ssc-tls-parity-'));
    vectors = makeVectors(dir);
    writeFileSync(
      join(dir, 'good.obj'),
      readFileSync(join(dir, 'rsa.pem'), 'latin1') + readFileSync(join(dir, 'leaf.pem'), 'latin1'),
    );
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('converts every vector as upstream does, or refuses where upstream fails or writes an empty key', () => {
    const problems: string[] = [];
    for (const vector of vectors) {
      for (const key of ['tls.crt', 'tls.key'] as const) {
        const expected = key === 'tls.crt' ? vector.crt : vector.key;
        const theirs = upstream(facts, dir, vector.file, key);
        const mine = ours(dir, vector.file, key);
        const label = `${vector.name} / ${key}`;
        if (expected === 'same') {
          if (!theirs.ok || !mine.ok)
            problems.push(
              `${label}: expected both to convert; upstream ${theirs.ok ? 'did' : `failed (${theirs.message})`}, ours ${mine.ok ? 'did' : `failed (${mine.message})`}`,
            );
          else if (!theirs.bytes.equals(mine.bytes))
            problems.push(
              `${label}: bytes differ\n--- upstream\n${theirs.bytes.toString('latin1')}--- ours\n${mine.bytes.toString('latin1')}`,
            );
        } else {
          const upstreamAsExpected =
            expected === 'refused' ? !theirs.ok : theirs.ok && theirs.bytes.toString() === EMPTY_KEY_BLOCK;
          if (!upstreamAsExpected)
            problems.push(
              `${label}: upstream did not ${expected === 'refused' ? 'fail' : 'write an empty key block'} (${theirs.ok ? theirs.bytes.toString('latin1').slice(0, 60) : theirs.message})`,
            );
          if (mine.ok) problems.push(`${label}: ours converted it, expected a refusal`);
          else if (
            !/^secretObjects web-tls: object "obj" for tls\.(crt|key): /.test(mine.message) ||
            /MII|[A-Za-z0-9+/]{40}/.test(mine.message)
          )
            problems.push(`${label}: refusal must name the Secret and object, never contents: ${mine.message}`);
        }
      }
    }
    expect(problems, problems.join('\n\n')).to.deep.equal([]);
  });

  it("writes keys as openssl's own traditional conversions do", () => {
    const key = (text: string) =>
      ours(
        dir,
        (writeFileSync(join(dir, 'k.obj'), text + readFileSync(join(dir, 'leaf.pem'), 'latin1')), 'k.obj'),
        'tls.key',
      );
    const rsa = key(readFileSync(join(dir, 'rsa.pem'), 'latin1'));
    const ec = key(readFileSync(join(dir, 'p256.pem'), 'latin1'));
    expect(rsa.ok && rsa.bytes.toString()).to.equal(openssl(dir, ['rsa', '-traditional', '-in', 'rsa.pem']).toString());
    expect(ec.ok && ec.bytes.toString()).to.equal(openssl(dir, ['ec', '-in', 'p256.pem']).toString());
  });
});
