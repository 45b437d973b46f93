import { expect } from 'chai';
import { decodeMountResponse } from '../../../../driver/provider-client/mount-response-decoder.js';
import type { MountResponse } from '../../../../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../../../../lib/errors.js';
import { providerProto } from '../../../../lib/grpc/grpc-proto.js';
import { Pacer } from '../../../../lib/pacer.js';

const method = providerProto().CSIDriverProvider.service.Mount;
const encode = (r: MountResponse): Buffer => method.responseSerialize(r);

/** A field `field` of wire type 2 holding `body` (to append unknown fields by hand). */
function lenField(field: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
}

describe('decodeMountResponse', () => {
  const cases: [string, MountResponse][] = [
    ['empty', {}],
    [
      'versions only',
      {
        object_version: [
          { id: 'a', version: '1' },
          { id: 'b/c', version: '' },
        ],
      },
    ],
    ['error code', { error: { code: 'AccessDenied' }, object_version: [] }],
    [
      'files with modes, empty and binary contents',
      {
        object_version: [{ id: 'x', version: 'v' }],
        files: [
          { path: 'x', mode: 0o644, contents: Buffer.from('hello') },
          { path: 'dir/é', mode: 0, contents: Buffer.alloc(0) },
          { path: 'bin', mode: 0o400, contents: Buffer.from([0, 255, 10, 13]) },
        ],
      },
    ],
    [
      'a negative mode (a 10-byte varint)',
      { object_version: [{ id: 'x', version: 'v' }], files: [{ path: 'x', mode: -1, contents: Buffer.from('a') }] },
    ],
    ['the largest int32 mode', { files: [{ path: 'x', mode: 2147483647, contents: Buffer.from('a') }] }],
    [
      'many files',
      {
        object_version: [{ id: 'o', version: '1' }],
        files: Array.from({ length: 5000 }, (_, i) => ({ path: `f${i}`, mode: 0, contents: Buffer.from(String(i)) })),
      },
    ],
  ];
  for (const [name, response] of cases) {
    it(`decodes like grpc-js's own deserializer of the method: ${name}`, async () => {
      const bytes = encode(response);
      const ours = await decodeMountResponse(bytes, new Pacer(0));
      expect(ours).to.deep.equal(method.responseDeserialize(bytes));
    });
  }

  it('gives the event loop back while it decodes many files', async () => {
    const bytes = encode({
      files: Array.from({ length: 5000 }, (_, i) => ({ path: `f${i}`, mode: 0, contents: Buffer.from('x') })),
    });
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      if (counting) {
        turns++;
        setImmediate(tick);
      }
    };
    setImmediate(tick);
    const decoded = await decodeMountResponse(bytes, new Pacer(0));
    counting = false;
    expect(decoded.files).to.have.length(5000);
    // A pause every 64 files once the (zero-length) slice is used: ~78 turns of other work.
    expect(turns).to.be.greaterThan(50);
  });

  it('skips unknown fields of every wire type, at every level', async () => {
    const known = encode({
      object_version: [{ id: 'a', version: '1' }],
      files: [{ path: 'p', mode: 0o600, contents: Buffer.from('c') }],
    });
    const unknown = Buffer.concat([
      Buffer.from([(9 << 3) | 0, 0x96, 0x01]), // varint
      Buffer.from([(10 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]), // fixed64
      lenField(11, Buffer.from('future')),
      Buffer.from([(12 << 3) | 5, 1, 2, 3, 4]), // fixed32
    ]);
    const file = lenField(
      3,
      Buffer.concat([lenField(1, Buffer.from('q')), unknown, Buffer.from([(2 << 3) | 0, 0x80, 0x03])]),
    );
    const version = lenField(1, Buffer.concat([unknown, lenField(1, Buffer.from('b')), lenField(2, Buffer.from('2'))]));
    const decoded = await decodeMountResponse(Buffer.concat([known, unknown, file, version]));
    expect(decoded.files.map((f) => [f.path, f.mode, f.contents.toString()])).to.deep.equal([
      ['p', 0o600, 'c'],
      ['q', 0o600, ''],
    ]);
    expect(decoded.object_version).to.deep.equal([
      { id: 'a', version: '1' },
      { id: 'b', version: '2' },
    ]);
  });

  it('refuses more object versions than allowed as RESOURCE_EXHAUSTED, and allows exactly that many', async () => {
    const bytes = encode({ object_version: Array.from({ length: 4 }, (_, i) => ({ id: `o${i}`, version: '1' })) });
    expect((await decodeMountResponse(bytes, undefined, 4)).object_version).to.have.length(4);
    const err = await decodeMountResponse(bytes, undefined, 3).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason, (err as SscError).message]).to.deep.equal([
      'resource-exhausted',
      'TooManyObjects',
      'response has more than 3 objects (--max-objects-per-volume)',
    ]);
  });

  const broken: [string, Buffer][] = [
    ['a length past the end', Buffer.concat([Buffer.from([(3 << 3) | 2, 50]), Buffer.from('short')])],
    ['a truncated varint', Buffer.from([(3 << 3) | 2])],
    ['a group (wire type 3)', Buffer.from([(7 << 3) | 3])],
    ['a truncated fixed32', Buffer.from([(12 << 3) | 5, 1, 2])],
    ['a file whose length runs past the end', Buffer.from([(3 << 3) | 2, 4, (1 << 3) | 2, 9, 0x61, 0x62])],
  ];
  for (const [name, bytes] of broken) {
    it(`refuses ${name} as INVALID_ARGUMENT`, async () => {
      const err = await decodeMountResponse(bytes).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(SscError);
      expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
        'invalid-argument',
        'InvalidProviderResponse',
      ]);
      expect((err as SscError).message).to.match(/^provider returned a malformed MountResponse \(/);
    });
  }
});

describe('decodeMountResponse error messages', () => {
  it('say what is wrong and where, never quoting the bytes', async () => {
    const err = await decodeMountResponse(Buffer.concat([Buffer.from([(3 << 3) | 2, 50]), Buffer.from('short')])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as SscError).message).to.equal(
      'provider returned a malformed MountResponse (a field runs past the end at byte 2 of 7)',
    );
    const group = await decodeMountResponse(Buffer.from([(7 << 3) | 4, 0x73, 0x65, 0x63])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((group as SscError).message).to.equal(
      'provider returned a malformed MountResponse (invalid wire type 4 at byte 1 of 4)',
    );
  });
});

describe('Pacer', () => {
  it('is due every 64th step once the slice is used, and a pause starts a new slice', async () => {
    let now = 0;
    const pacer = new Pacer(10, () => now);
    const dues = (): number => {
      let n = 0;
      for (let i = 0; i < 128; i++) if (pacer.due()) n++;
      return n;
    };
    expect(dues()).to.equal(0);
    now = 10;
    expect(dues()).to.equal(2);
    await pacer.pause();
    expect(dues()).to.equal(0);
  });
});
