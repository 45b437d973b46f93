import { expect } from 'chai';
import { decodeGrpcMessage, encodeGrpcMessage } from '../../proto/grpc/message-text.js';

describe('proto/grpc message-text: grpc-message percent-encoding', () => {
  describe('encodeGrpcMessage', () => {
    const cases: [string, string, string][] = [
      ['printable ASCII as it is', 'volume "v" not found: bad path/x', 'volume "v" not found: bad path/x'],
      ['the empty message', '', ''],
      ['a percent sign', '100% done', '100%25 done'],
      ['controls', 'a\nb\tc\r\u0000', 'a%0Ab%09c%0D%00'],
      ['DEL', '\u007f', '%7F'],
      ['non-ASCII as UTF-8 bytes, upper-case hex', 'nöt ✓', 'n%C3%B6t %E2%9C%93'],
      ['an emoji (a surrogate pair)', '😀', '%F0%9F%98%80'],
      ['a lone surrogate as U+FFFD', 'a\ud800b', 'a%EF%BF%BDb'],
      ['space and tilde, the ends of the unencoded range', ' ~', ' ~'],
    ];
    for (const [what, text, header] of cases) {
      it(what, () => {
        expect(encodeGrpcMessage(text)).to.equal(header);
      });
    }
  });

  describe('decodeGrpcMessage', () => {
    const cases: [string, string, string][] = [
      ['plain text as it is', 'not found', 'not found'],
      ['a percent-encoded percent', '100%25', '100%'],
      ['UTF-8 bytes', 'n%C3%B6t %E2%9C%93', 'nöt ✓'],
      ['lower-case hex', '%c3%b6', 'ö'],
      ['a broken sequence stays as it is', '50%zz off', '50%zz off'],
      ['a sequence cut short at the end', 'abc%4', 'abc%4'],
      ['a lone percent at the end', 'abc%', 'abc%'],
      ['invalid UTF-8 becomes U+FFFD (never thrown away)', 'a%FFb', 'a\ufffdb'],
      ['a raw UTF-8 byte as Node hands it over (latin1)', 'caf\u00c3\u00a9', 'café'],
      ['an encoded newline', 'line1%0Aline2', 'line1\nline2'],
    ];
    for (const [what, header, text] of cases) {
      it(what, () => {
        expect(decodeGrpcMessage(header)).to.equal(text);
      });
    }
  });

  it('round-trips every kind of text', () => {
    for (const text of ['', 'plain', '%%%', '100%25', 'ünïcödé ✓ 😀', 'a\nb\u0001c', '%41 is not A']) {
      expect(decodeGrpcMessage(encodeGrpcMessage(text))).to.equal(text);
    }
  });
});
