import { expect } from 'chai';
import { frameMessage, MessageDeframer } from '../../proto/grpc/framing.js';

const bytes = (...b: number[]) => Buffer.from(b);

describe('proto/grpc framing: length-prefixed messages', () => {
  describe('frameMessage', () => {
    const cases: [string, Buffer, boolean, Buffer][] = [
      ['an empty message', bytes(), false, bytes(0, 0, 0, 0, 0)],
      ['a short message', bytes(1, 2, 3), false, bytes(0, 0, 0, 0, 3, 1, 2, 3)],
      ['a compressed one', bytes(9), true, bytes(1, 0, 0, 0, 1, 9)],
    ];
    for (const [what, message, compressed, frame] of cases) {
      it(what, () => {
        expect(frameMessage(message, compressed)).to.deep.equal(frame);
      });
    }
    it('a length over 16 bits, big-endian', () => {
      expect(frameMessage(Buffer.alloc(0x012345)).subarray(0, 5)).to.deep.equal(bytes(0, 0, 0x01, 0x23, 0x45));
    });
  });

  describe('MessageDeframer', () => {
    const two = Buffer.concat([frameMessage(bytes(1, 2, 3)), frameMessage(bytes(), true), frameMessage(bytes(7))]);
    const splits: [string, number[]][] = [
      ['all in one chunk', [two.length]],
      ['byte by byte', Array.from({ length: two.length }, () => 1)],
      ['split inside a prefix', [3, two.length - 3]],
      ['split inside a message', [6, 1, two.length - 7]],
      ['split at message boundaries', [8, 5, two.length - 13]],
    ];
    for (const [what, sizes] of splits) {
      it(`reassembles messages ${what}`, () => {
        const d = new MessageDeframer(100);
        let at = 0;
        for (const size of sizes) {
          expect(d.push(two.subarray(at, at + size))).to.equal(undefined);
          at += size;
        }
        expect(d.messages.map((m) => [m.compressed, [...m.bytes]])).to.deep.equal([[false, [1, 2, 3]], [true, []], [false, [7]]]);
        expect(d.pendingBytes).to.equal(0);
      });
    }

    it('counts the bytes of a message cut short', () => {
      const d = new MessageDeframer(100);
      d.push(frameMessage(bytes(1, 2, 3, 4)).subarray(0, 7));
      expect([d.messages.length, d.pendingBytes]).to.deep.equal([0, 7]);
      const e = new MessageDeframer(100);
      e.push(bytes(0, 0));
      expect(e.pendingBytes).to.equal(2);
    });

    const problems: [string, number, number, Buffer, object][] = [
      ['a declared length over the limit, from the prefix alone', 10, Infinity, bytes(0, 0, 0, 0, 11), { kind: 'too-large', length: 11, max: 10 }],
      ['a 4 GiB declaration', 4 * 1024 * 1024, Infinity, bytes(0, 0xff, 0xff, 0xff, 0xff), { kind: 'too-large', length: 0xffffffff, max: 4 * 1024 * 1024 }],
      ['a second message where one is allowed, at its first byte', 10, 1, Buffer.concat([frameMessage(bytes(1)), bytes(0)]), { kind: 'too-many', max: 1 }],
      ['a compressed flag other than 0 or 1', 10, Infinity, bytes(2, 0, 0, 0, 0), { kind: 'bad-flag', flag: 2 }],
    ];
    for (const [what, max, maxMessages, input, problem] of problems) {
      it(`reports ${what}`, () => {
        const d = new MessageDeframer(max, maxMessages);
        expect(d.push(input)).to.deep.equal(problem);
        expect(d.push(bytes(0, 0, 0, 0, 0)), 'and keeps reporting it').to.deep.equal(problem);
      });
    }

    it('accepts a message of exactly the limit', () => {
      const d = new MessageDeframer(3);
      expect(d.push(frameMessage(bytes(1, 2, 3)))).to.equal(undefined);
      expect(d.messages).to.have.length(1);
    });
  });
});
