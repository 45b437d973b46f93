import { expect } from 'chai';
import { decodeGoBase64, decodeGoHex } from '../../../../providers/framework/go-encoding.js';

// What is accepted, and its bytes, is what Go's base64.StdEncoding.DecodeString and
// hex.DecodeString give for these texts (checked with Go 1.26); the words of a problem
// are ours (Go says "invalid byte" for "ab\n", where the length is checked first here).

describe("decodeGoBase64: what Go's base64.StdEncoding.DecodeString accepts", () => {
  const accepted: [text: string, bytes: string][] = [
    ['', ''],
    ['YQ==', '61'],
    ['YWI=', '6162'],
    ['YWJj', '616263'],
    ['YR==', '61'], // StdEncoding is not Strict: non-zero trailing bits are dropped
    ['+/+/', 'fbffbf'],
    ['YWJj\nZGVm', '616263646566'],
    ['YW\r\nJj\n', '616263'],
    ['\n\nYQ=\n=', '61'],
    ['\r\n', ''],
  ];
  for (const [text, hex] of accepted) {
    it(`accepts ${JSON.stringify(text)}`, () =>
      expect(decodeGoBase64(text)).to.deep.equal({ bytes: Buffer.from(hex, 'hex') }));
  }
  const refused: [name: string, text: string][] = [
    ['missing padding', 'YQ'],
    ['a short group', 'YWJ'],
    ['the URL alphabet', '-_-_'],
    ['a space', 'YW Jj'],
    ['a tab', 'YWJj\t'],
    ['padding inside', 'YQ==YWJj'],
    ['too much padding', 'YQ==='],
    ['padding alone', '===='],
    ['a single character', 'Y'],
    ['a character outside the alphabet', 'YW*j'],
    ['one padding character short', 'YWJjZA='],
    ['padding first', '=YWJ'],
    ['a whole group of padding', 'YWJj===='],
  ];
  for (const [name, text] of refused) {
    it(`refuses ${name} (${JSON.stringify(text)}), saying why without the text`, () =>
      expect(decodeGoBase64(text)).to.deep.equal({ problem: 'Go base64.StdEncoding: padded standard alphabet only' }));
  }
});

describe("decodeGoHex: what Go's hex.DecodeString accepts", () => {
  const accepted: [text: string, bytes: number[]][] = [
    ['', []],
    ['00', [0]],
    ['ff', [255]],
    ['FF', [255]],
    ['aBcD', [0xab, 0xcd]],
  ];
  for (const [text, bytes] of accepted) {
    it(`accepts ${JSON.stringify(text)}`, () => expect(decodeGoHex(text)).to.deep.equal({ bytes: Buffer.from(bytes) }));
  }
  const refused: [text: string, problem: string][] = [
    ['f', 'odd length'],
    ['abc', 'odd length'],
    ['zz', 'a character that is not a hex digit'],
    ['0g', 'a character that is not a hex digit'],
    ['ab cd ', 'a character that is not a hex digit'],
    ['0x00', 'a character that is not a hex digit'],
    ['ab\n', 'odd length'],
    ['ab\ncd', 'odd length'],
    ['ab\n\n', 'a character that is not a hex digit'],
  ];
  for (const [text, problem] of refused) {
    it(`refuses ${JSON.stringify(text)}: ${problem}`, () => expect(decodeGoHex(text)).to.deep.equal({ problem }));
  }
});
