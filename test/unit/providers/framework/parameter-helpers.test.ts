import { expect } from 'chai';
import { callTimeoutMs, DEADLINE_MARGIN_MS } from '../../../../providers/framework/call-deadline.js';
import { decodeGoBase64, decodeGoHex } from '../../../../providers/framework/go-encoding.js';
import { parseObjectList, readObjectEntry } from '../../../../providers/framework/object-list.js';
import { fieldName, invalidParameterOf } from '../../../../providers/framework/parameter-errors.js';
import { SscError } from '../../../../lib/errors.js';

const invalid = invalidParameterOf('test');
const RULES = { invalid, known: new Set(['objectName', 'path', 'filePermission']), kind: 'a test object' };

function refused(fn: () => unknown): SscError {
  try {
    fn();
  } catch (err) {
    return err as SscError;
  }
  throw new Error('expected an error');
}

describe('providers/framework parameter helpers', () => {
  it('invalidParameterOf: INVALID_ARGUMENT, reason InvalidParameters, the provider named first', () => {
    const err = invalid('objects is required');
    expect([err.kind, err.reason, err.message]).to.deep.equal([
      'invalid-argument',
      'InvalidParameters',
      'test provider: objects is required',
    ]);
  });

  it('fieldName names the list, the index and the objectName (quoted)', () => {
    expect(fieldName('objects', 1, 'db-pass', 'secretKey')).to.equal('objects[1] ("db-pass").secretKey');
    expect(fieldName('objects.array', 0, undefined, 'objectType')).to.equal('objects.array[0].objectType');
  });

  const decodes: [string, (t: string) => ReturnType<typeof decodeGoHex>, string, string | Buffer][] = [
    ['base64', decodeGoBase64, 'aGk=', Buffer.from('hi')],
    ['base64 with line breaks (Go skips \\r and \\n)', decodeGoBase64, 'aG\r\nk=', Buffer.from('hi')],
    ['base64 without padding', decodeGoBase64, 'aGk', 'Go base64.StdEncoding: padded standard alphabet only'],
    ['base64 with a space', decodeGoBase64, 'aG k=', 'Go base64.StdEncoding: padded standard alphabet only'],
    ['base64 URL alphabet', decodeGoBase64, 'a-_=', 'Go base64.StdEncoding: padded standard alphabet only'],
    ['hex, either case', decodeGoHex, '6869AbCd', Buffer.from([0x68, 0x69, 0xab, 0xcd])],
    ['hex of odd length', decodeGoHex, 'abc', 'odd length'],
    ['hex with a non-digit', decodeGoHex, 'zz', 'a character that is not a hex digit'],
  ];
  for (const [name, decode, text, want] of decodes) {
    it(`decodes as Go does: ${name}`, () => {
      const got = decode(text);
      if (Buffer.isBuffer(want)) expect('bytes' in got && got.bytes.equals(want)).to.equal(true);
      else expect(got).to.deep.equal({ problem: want });
    });
  }

  const timeouts: [number | undefined, number, number, number][] = [
    [undefined, 0, 10_000, 10_000],
    [60_000, 0, 10_000, 10_000],
    [5_000, 0, 10_000, 5_000 - DEADLINE_MARGIN_MS],
    [100, 0, 10_000, 0],
  ];
  for (const [deadline, now, limit, want] of timeouts) {
    it(`callTimeoutMs(deadline ${deadline}, now ${now}, limit ${limit}) = ${want}`, () => {
      expect(callTimeoutMs(deadline, now, limit)).to.equal(want);
    });
  }

  it('an object list: required objectName, a file name, unique; unknown fields warned; filePermission read', () => {
    const warnings: string[] = [];
    const parse = (raw: string) =>
      parseObjectList(raw, 10, { ...RULES, required: 'objects is required' }, (entry, i, doc) => {
        const e = readObjectEntry(entry, i, doc, RULES, warnings);
        return { objectName: e.objectName, path: e.string('path') };
      });
    expect(parse('- objectName: a\n  path: p\n  pat: q\n')).to.deep.equal([{ objectName: 'a', path: 'p' }]);
    expect(warnings).to.deep.equal(['objects[0] ("a").pat is not a field of a test object; ignored']);
    expect(refused(() => parse('')).message).to.equal('test provider: objects is required');
    expect(refused(() => parse('- path: p\n')).message).to.equal('test provider: objects[0].objectName is required');
    expect(refused(() => parse('- objectName: ../x\n')).message).to.match(
      /^test provider: objects\[0\] \("\.\.\/x"\)\.objectName is not a file name the volume can hold: /,
    );
    expect(refused(() => parse('- objectName: a\n- objectName: a\n')).message).to.equal(
      'test provider: objects[1].objectName "a" is listed twice; each objectName must be unique',
    );
    expect(refused(() => parse('- objectName: [a]\n')).message).to.equal(
      'test provider: objects[0].objectName must be a string, not a list',
    );
  });
});
