import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import {
  ipAddressBytes,
  isDnsName,
  parseCertificateRequest,
  type CertificateRequest,
} from '../../../../providers/pki/parameters.js';
import { expandTemplate } from '../../../../providers/pki/templates.js';

// The pki provider's parameters and templates: pure parsing, every refusal naming the
// parameter (and, for a value made from pod information, the value it became).

const POD = {
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/pod.namespace': 'shop',
  'csi.storage.k8s.io/serviceAccount.name': 'web-sa',
  'csi.storage.k8s.io/pod.uid': '0b6c9d3e-1f2a-4b5c-8d7e-9f0a1b2c3d4e',
};
const LIMITS = { minDurationSeconds: 3600 };

function parse(extra: Record<string, string>, pod: Record<string, string> = POD): CertificateRequest {
  return parseCertificateRequest({ commonName: '${POD_NAME}', ...pod, ...extra }, LIMITS);
}

function refusal(extra: Record<string, string>, pod: Record<string, string> = POD): SscError {
  try {
    parse(extra, pod);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).message).to.match(/^pki provider: /);
    return err as SscError;
  }
  throw new Error('expected the parameters to be refused');
}

describe('pki templates', () => {
  const cases: [string, string][] = [
    ['${POD_NAME}', 'web-0'],
    ['${POD_NAME}.${POD_NAMESPACE}.svc', 'web-0.shop.svc'],
    [
      'spiffe://cluster.local/ns/${POD_NAMESPACE}/sa/${SERVICE_ACCOUNT_NAME}',
      'spiffe://cluster.local/ns/shop/sa/web-sa',
    ],
    ['uid-${POD_UID}', 'uid-0b6c9d3e-1f2a-4b5c-8d7e-9f0a1b2c3d4e'],
    ['plain', 'plain'],
    ['cost $5 {ok}', 'cost $5 {ok}'],
    ['$${POD_NAME}', '$web-0'],
  ];
  for (const [template, expanded] of cases) {
    it(`expands ${template}`, () => expect(expandTemplate(template, 'f', POD)).to.equal(expanded));
  }
  const refused: [string, string, RegExp][] = [
    ['${POD_IP}', 'InvalidParameters', /f: unknown template variable "\$\{POD_IP\}"/],
    ['${pod_name}', 'InvalidParameters', /unknown template variable/],
    ['${}', 'InvalidParameters', /unknown template variable "\$\{\}"/],
    ['${POD_NAME', 'InvalidParameters', /f: unterminated "\$\{"/],
    ['${constructor}', 'InvalidParameters', /unknown template variable/],
    ['${toString}', 'InvalidParameters', /unknown template variable/],
  ];
  for (const [template, reason, message] of refused) {
    it(`refuses ${template}`, () => {
      try {
        expandTemplate(template, 'f', POD);
      } catch (err) {
        expect((err as SscError).reason).to.equal(reason);
        expect((err as SscError).kind).to.equal('invalid-argument');
        expect((err as SscError).message).to.match(message);
        return;
      }
      throw new Error('expected a refusal');
    });
  }
  it('a variable whose pod attribute is missing is PodInfoMissing (FAILED_PRECONDITION)', () => {
    const e = (() => {
      try {
        expandTemplate('${POD_UID}', 'uris[0]', { ...POD, 'csi.storage.k8s.io/pod.uid': '' });
      } catch (err) {
        return err as SscError;
      }
      throw new Error('no error');
    })();
    expect(e.reason).to.equal('PodInfoMissing');
    expect(e.kind).to.equal('failed-precondition');
    expect(e.message).to.include('uris[0] uses ${POD_UID} but the Mount has no csi.storage.k8s.io/pod.uid');
  });
});

describe('pki parameters', () => {
  it('defaults: ECDSA-P256, server, 24h, no SANs, tls.key with the request permission', () => {
    const r = parse({});
    expect(r).to.deep.include({
      commonName: 'web-0',
      keyAlgorithm: 'ECDSA-P256',
      usages: ['server'],
      durationSeconds: 86400,
      keyFilePermission: undefined,
    });
    expect(r.dnsNames).to.deep.equal([]);
    expect(r.ipAddresses).to.deep.equal([]);
    expect(r.uris).to.deep.equal([]);
  });

  it('reads every parameter, templated, trimmed, with empty list entries skipped', () => {
    const r = parse({
      commonName: ' ${POD_NAME}.${POD_NAMESPACE} ',
      dnsNames: '${POD_NAME}.${POD_NAMESPACE}.svc, *.example.com,,localhost',
      ipAddresses: '10.1.2.3, ::1 ,2001:db8::7',
      uris: 'spiffe://td/ns/${POD_NAMESPACE}/sa/${SERVICE_ACCOUNT_NAME}',
      usages: 'client,server,client',
      keyAlgorithm: 'RSA-4096',
      duration: '720h',
      keyFilePermission: '0640',
    });
    expect(r.commonName).to.equal('web-0.shop');
    expect(r.dnsNames).to.deep.equal(['web-0.shop.svc', '*.example.com', 'localhost']);
    expect(r.ipAddresses.map((b) => b.toString('hex'))).to.deep.equal([
      '0a010203',
      '00000000000000000000000000000001',
      '20010db8000000000000000000000007',
    ]);
    expect(r.uris).to.deep.equal(['spiffe://td/ns/shop/sa/web-sa']);
    expect(r.usages).to.deep.equal(['client', 'server']);
    expect(r.keyAlgorithm).to.equal('RSA-4096');
    expect(r.durationSeconds).to.equal(720 * 3600);
    expect(r.keyFilePermission).to.equal(0o640);
  });

  for (const alg of ['ECDSA-P256', 'RSA-2048', 'RSA-4096', 'Ed25519']) {
    it(`keyAlgorithm ${alg}`, () => expect(parse({ keyAlgorithm: alg }).keyAlgorithm).to.equal(alg));
  }

  const refusals: [string, Record<string, string>, string, RegExp][] = [
    ['no commonName', { commonName: '' }, 'InvalidParameters', /commonName is required/],
    [
      'a commonName over 64 characters',
      { commonName: 'x'.repeat(65) },
      'InvalidParameters',
      /commonName "x+…?" must be at most 64 characters/,
    ],
    ['a control character in commonName', { commonName: 'a\nb' }, 'InvalidParameters', /commonName "a\\nb" must be/],
    [
      'an unknown template in commonName',
      { commonName: '${NODE_NAME}' },
      'InvalidParameters',
      /commonName: unknown template variable "\$\{NODE_NAME\}"/,
    ],
    [
      'a DNS name with a space',
      { dnsNames: 'ok.example, bad name' },
      'InvalidParameters',
      /dnsNames\[1\] "bad name" is not a valid DNS name/,
    ],
    ['a DNS label over 63 characters', { dnsNames: `${'a'.repeat(64)}.example` }, 'InvalidParameters', /dnsNames\[0\]/],
    [
      'a DNS name with a trailing dot',
      { dnsNames: 'example.com.' },
      'InvalidParameters',
      /dnsNames\[0\] "example.com." is not a valid DNS name/,
    ],
    ['a DNS label ending in a hyphen', { dnsNames: 'a-.example' }, 'InvalidParameters', /dnsNames\[0\]/],
    ['a wildcard not in front', { dnsNames: 'a.*.example' }, 'InvalidParameters', /dnsNames\[0\]/],
    [
      'an unknown template in dnsNames',
      { dnsNames: '${POD_IP}.svc' },
      'InvalidParameters',
      /dnsNames\[0\]: unknown template variable/,
    ],
    [
      'too many DNS names',
      { dnsNames: Array.from({ length: 101 }, (_, i) => `n${i}.example`).join(',') },
      'InvalidParameters',
      /dnsNames lists 101 entries; at most 100/,
    ],
    [
      'a bad IPv4 address',
      { ipAddresses: '10.0.0.256' },
      'InvalidParameters',
      /ipAddresses\[0\] "10.0.0.256" is not an IPv4 or IPv6 address/,
    ],
    ['an IPv6 address with a zone', { ipAddresses: 'fe80::1%eth0' }, 'InvalidParameters', /ipAddresses\[0\]/],
    ['a host name as IP address', { ipAddresses: 'localhost' }, 'InvalidParameters', /ipAddresses\[0\] "localhost"/],
    ['a relative URI', { uris: '/ns/shop' }, 'InvalidParameters', /uris\[0\] "\/ns\/shop" is not an absolute URI/],
    ['a URI with a space', { uris: 'spiffe://td/a b' }, 'InvalidParameters', /uris\[0\]/],
    ['a URI with non-ASCII', { uris: 'https://bücher.example/' }, 'InvalidParameters', /uris\[0\]/],
    [
      'an unknown usage',
      { usages: 'server,signing' },
      'InvalidParameters',
      /usages: unknown usage "signing" \(server or client\)/,
    ],
    ['empty usages', { usages: ' , ' }, 'InvalidParameters', /usages is empty/],
    [
      'an unknown key algorithm',
      { keyAlgorithm: 'ECDSA-P384' },
      'InvalidParameters',
      /keyAlgorithm "ECDSA-P384" is not one of ECDSA-P256, RSA-2048, RSA-4096, Ed25519/,
    ],
    ['a lowercase key algorithm', { keyAlgorithm: 'ed25519' }, 'InvalidParameters', /keyAlgorithm "ed25519"/],
    [
      'a duration that is no Go duration',
      { duration: '1d' },
      'InvalidParameters',
      /duration "1d" is not a Go duration/,
    ],
    [
      'a duration below --min-duration',
      { duration: '59m59s' },
      'InvalidParameters',
      /duration "59m59s" must be between 3600s \(--min-duration\) and 8760h/,
    ],
    ['a duration over a year', { duration: '8761h' }, 'InvalidParameters', /duration "8761h" must be between/],
    ['a negative duration', { duration: '-24h' }, 'InvalidParameters', /duration "-24h" must be between/],
    [
      'a keyFilePermission that is not octal',
      { keyFilePermission: '0x1a4' },
      'InvalidParameters',
      /keyFilePermission "0x1a4" must be an octal mode/,
    ],
    [
      'a keyFilePermission of four digits',
      { keyFilePermission: '1640' },
      'InvalidParameters',
      /keyFilePermission "1640"/,
    ],
  ];
  for (const [name, extra, reason, message] of refusals) {
    it(`refuses ${name}`, () => {
      const e = refusal(extra);
      expect(e.reason).to.equal(reason);
      expect(e.kind).to.equal('invalid-argument');
      expect(e.message).to.match(message);
    });
  }

  it('a pod name that makes an invalid DNS name is refused naming the parameter and the name', () => {
    const e = refusal({ dnsNames: '${POD_NAME}.svc' }, { ...POD, 'csi.storage.k8s.io/pod.name': 'Web_0' });
    expect(e.message).to.include('dnsNames[0] "Web_0.svc" is not a valid DNS name');
  });

  it('a template needing pod information the Mount lacks is PodInfoMissing', () => {
    const e = refusal({}, {});
    expect(e.reason).to.equal('PodInfoMissing');
    expect(e.message).to.include('commonName uses ${POD_NAME} but the Mount has no csi.storage.k8s.io/pod.name');
  });

  it('--min-duration bounds duration from below', () => {
    expect(
      parseCertificateRequest({ commonName: 'x', duration: '10s' }, { minDurationSeconds: 10 }).durationSeconds,
    ).to.equal(10);
    expect(() => parseCertificateRequest({ commonName: 'x', duration: '9s' }, { minDurationSeconds: 10 })).to.throw(
      /between 10s/,
    );
  });
});

describe('pki names', () => {
  const dns: [string, boolean][] = [
    ['a', true],
    ['web-0.shop.svc.cluster.local', true],
    ['*.example.com', true],
    ['xn--bcher-kva.example', true],
    ['*', false],
    ['', false],
    ['-a.example', false],
    ['a..b', false],
    ['a_b.example', false],
    [`${'a.'.repeat(126)}ab`, false],
  ];
  for (const [name, ok] of dns)
    it(`isDnsName(${JSON.stringify(name.slice(0, 30))}) is ${ok}`, () => expect(isDnsName(name)).to.equal(ok));

  const ips: [string, string | undefined][] = [
    ['127.0.0.1', '7f000001'],
    ['::', '00'.repeat(16)],
    ['::1', `${'00'.repeat(15)}01`],
    ['1::', `0001${'00'.repeat(14)}`],
    ['2001:db8:0:0:1:0:0:1', '20010db8000000000001000000000001'],
    ['::ffff:192.0.2.1', '00000000000000000000ffffc0000201'],
    ['64:ff9b::198.51.100.7', '0064ff9b0000000000000000c6336407'],
    ['fe80::1%lo', undefined],
    ['1.2.3', undefined],
    ['::g', undefined],
  ];
  for (const [text, hex] of ips)
    it(`ipAddressBytes(${text})`, () => expect(ipAddressBytes(text)?.toString('hex')).to.equal(hex));
});
