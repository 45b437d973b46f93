import { expect } from 'chai';
import { OBJECT_IDS, renewAt, renewalDecision, type RenewalDecision } from '../../../../providers/pki/renewal.js';
import { decodeSerialVersion, encodeSerial, serialVersion } from '../../../../providers/pki/serial.js';

// The stateless renewal rule (docs/providers/pki.md, "Renewal": 80% of validity or 10 days left, whichever comes
// first; the 10-day point only when it is past the midpoint) and the serial carrying it.

const H = 3600;
const D = 24 * H;
const T0 = 1_800_000_000; // 2027-01-15T08:00:00Z

describe('pki renewal point', () => {
  const table: [string, number, number][] = [
    // validity, renewal point after notBefore
    ['1h', H, 0.8 * H],
    ['24h', D, 0.8 * D], // 19.2h
    ['10d', 10 * D, 8 * D], // 10-day point = notBefore: not past the midpoint
    ['15d', 15 * D, 12 * D], // 10-day point at 5d, before the midpoint 7.5d
    ['20d', 20 * D, 16 * D], // 10-day point at 10d = the midpoint: not later
    ['21d', 21 * D, 11 * D], // 10-day point at 11d, past the midpoint 10.5d, before 16.8d
    ['30d', 30 * D, 20 * D],
    ['90d', 90 * D, 72 * D],
    ['1y', 365 * D, 292 * D],
    ['10s', 10, 8],
  ];
  for (const [name, validity, after] of table) {
    it(`${name} → renew ${after}s (${(after / H).toFixed(1)}h) after notBefore`, () =>
      expect(renewAt(T0, T0 + validity) - T0).to.equal(after));
  }
});

describe('pki serial', () => {
  it('round-trips notBefore, notAfter and the signer tag, 20 octets, positive', () => {
    for (const [nb, na] of [
      [0, 1],
      [T0, T0 + D],
      [0xfffffffe, 0xffffffff],
    ] as const) {
      const serial = encodeSerial({ notBefore: nb, notAfter: na, signerTag: 'a1b2c3d4' }, Buffer.alloc(7, 0xff));
      expect(serial.length).to.equal(20);
      expect(serial[0]).to.equal(1);
      const version = serialVersion(serial);
      expect(version).to.match(/^[0-9a-f]{40}$/);
      expect(decodeSerialVersion(version)).to.deep.equal({ notBefore: nb, notAfter: na, signerTag: 'a1b2c3d4' });
    }
  });
  it('random octets make serials of one second and signer differ', () => {
    const facts = { notBefore: T0, notAfter: T0 + D, signerTag: '00000000' };
    expect(serialVersion(encodeSerial(facts, Buffer.alloc(7, 1)))).to.not.equal(
      serialVersion(encodeSerial(facts, Buffer.alloc(7, 2))),
    );
  });
  const foreign = [
    '',
    'abc',
    '02' + '00'.repeat(19),
    '01' + '00'.repeat(18),
    'AB'.repeat(20),
    `01${'00'.repeat(8)}${'00'.repeat(11)}`,
    'zz'.repeat(20),
  ];
  for (const v of foreign)
    it(`a foreign version ${JSON.stringify(v.slice(0, 12))}… decodes to nothing`, () =>
      expect(decodeSerialVersion(v)).to.equal(undefined));
  it('refuses what does not fit', () => {
    expect(() => encodeSerial({ notBefore: -1, notAfter: 1, signerTag: '00000000' }, Buffer.alloc(7))).to.throw(
      RangeError,
    );
    expect(() => encodeSerial({ notBefore: 0, notAfter: 2 ** 32, signerTag: '00000000' }, Buffer.alloc(7))).to.throw(
      RangeError,
    );
    expect(() => encodeSerial({ notBefore: 0, notAfter: 1, signerTag: 'xyz' }, Buffer.alloc(7))).to.throw(RangeError);
    expect(() => encodeSerial({ notBefore: 0, notAfter: 1, signerTag: '00000000' }, Buffer.alloc(6))).to.throw(
      RangeError,
    );
  });
});

describe('pki renewal decision (injected clock)', () => {
  const SIGNER = 'a1b2c3d4';
  const BUNDLE = 'b'.repeat(64);
  const version = (nb: number, na: number, signer = SIGNER) =>
    serialVersion(encodeSerial({ notBefore: nb, notAfter: na, signerTag: signer }, Buffer.alloc(7, 9)));
  const mounted = (v: string, bundle = BUNDLE, key = v) =>
    new Map([
      [OBJECT_IDS.cert, v],
      [OBJECT_IDS.key, key],
      [OBJECT_IDS.bundle, bundle],
    ]);
  const day = version(T0, T0 + D);
  const table: [string, Map<string, string>, number, boolean, RenewalDecision][] = [
    ['first mount', new Map(), T0, true, 'first'],
    ['24h cert after 1h', mounted(day), T0 + H, true, 'keep'],
    ['24h cert 1 s before 19.2h', mounted(day), T0 + 0.8 * D - 1, true, 'keep'],
    ['24h cert at 19.2h', mounted(day), T0 + 0.8 * D, true, 'due'],
    ['24h cert after it expired', mounted(day), T0 + 2 * D, true, 'due'],
    ['a cert not valid yet (clock went back)', mounted(day), T0 - 60, true, 'due'],
    ['30d cert at 19d', mounted(version(T0, T0 + 30 * D)), T0 + 19 * D, true, 'keep'],
    ['30d cert at 20d (10 days left)', mounted(version(T0, T0 + 30 * D)), T0 + 20 * D, true, 'due'],
    ['1y cert at 291d', mounted(version(T0, T0 + 365 * D)), T0 + 291 * D, true, 'keep'],
    ['1y cert at 292d (80%)', mounted(version(T0, T0 + 365 * D)), T0 + 292 * D, true, 'due'],
    ['another signer', mounted(version(T0, T0 + D, 'ffffffff')), T0 + H, true, 'signer-changed'],
    ['another bundle', mounted(day, 'c'.repeat(64)), T0 + H, true, 'bundle-changed'],
    ['the class or permission changed', mounted(day), T0 + H, false, 'rendering-changed'],
    ['a version this provider did not write', mounted('1'), T0 + H, true, 'unknown-version'],
    [
      'tls.key of another serial',
      mounted(day, BUNDLE, version(T0, T0 + D, '00000000')),
      T0 + H,
      true,
      'unknown-version',
    ],
    [
      'tls.key not mounted',
      new Map([
        [OBJECT_IDS.cert, day],
        [OBJECT_IDS.bundle, BUNDLE],
      ]),
      T0 + H,
      true,
      'unknown-version',
    ],
  ];
  for (const [name, current, now, sameRendering, expected] of table) {
    it(`${name} → ${expected}`, () => {
      expect(renewalDecision({ current, sameRendering, signerTag: SIGNER, bundleVersion: BUNDLE, now })).to.equal(
        expected,
      );
    });
  }
});
