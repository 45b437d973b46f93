import { expect } from 'chai';
import { quotePath } from '../../../driver/volume/path-rules.js';
import { printable, quoted } from '../../../lib/untrusted-text.js';

describe('untrusted text (provider messages, codes and paths in our messages)', () => {
  const printables: [string, string, number, string][] = [
    ['plain text is kept', 'vault: permission denied on secret/db', 100, 'vault: permission denied on secret/db'],
    ['quotes and backslashes are kept (not quoted)', 'path "a\\b"', 100, 'path "a\\b"'],
    ['newline, CR, tab', 'a\nb\rc\td', 100, 'a\\nb\\rc\\td'],
    ['ANSI escape', '\u001b[31mred\u001b[0m', 100, '\\u001b[31mred\\u001b[0m'],
    ['NUL, DEL and C1 (CSI 0x9b)', '\u0000\u007f\u009b', 100, '\\u0000\\u007f\\u009b'],
    ['bidi override and isolate', 'abc\u202edef\u2066', 100, 'abc\\u202edef\\u2066'],
    ['zero-width, line separator, BOM', 'a\u200bb\u2028c\ufeff', 100, 'a\\u200bb\\u2028c\\ufeff'],
    ['a lone surrogate', 'a\ud800b', 100, 'a\\ud800b'],
    ['letters beyond ASCII and emoji are kept', 'Größe 😀 ✓', 100, 'Größe 😀 ✓'],
    ['cut at the limit, marked', 'abcdef', 3, 'abc…'],
    ['exactly at the limit, not marked', 'abc', 3, 'abc'],
    ['a cut never splits a surrogate pair', 'ab😀', 3, 'ab…'],
    ['the limit applies before escaping', '\n'.repeat(10), 2, '\\n\\n…'],
    ['empty', '', 10, ''],
  ];
  for (const [name, text, max, shown] of printables) {
    it(`printable: ${name}`, () => expect(printable(text, max)).to.equal(shown));
  }

  const quotes: [string, string, number, string][] = [
    ['plain', 'db/password', 64, '"db/password"'],
    ['quotes and backslashes are escaped', 'a"b\\c', 64, '"a\\"b\\\\c"'],
    ['controls are escaped', 'x\ny\u001b', 64, '"x\\ny\\u001b"'],
    ['cut inside the quotes', 'abcdef', 4, '"abcd…"'],
  ];
  for (const [name, text, max, shown] of quotes) {
    it(`quoted: ${name}`, () => expect(quoted(text, max)).to.equal(shown));
  }

  it('quotePath shows a rejected path at most partially (64 characters), escaped', () => {
    expect(quotePath('/etc/passwd')).to.equal('"/etc/passwd"');
    expect(quotePath(`dir/${'a'.repeat(100)}`)).to.equal(`"dir/${'a'.repeat(60)}…"`);
    expect(quotePath('a\n\u001b[2J')).to.equal('"a\\n\\u001b[2J"');
  });

  it('output stays bounded for a megabyte of control characters', () => {
    expect(printable('\u0001'.repeat(1 << 20), 512).length).to.equal(512 * 6 + 1);
  });
});
