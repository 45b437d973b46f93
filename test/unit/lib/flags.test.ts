import { expect } from 'chai';
import { booleanFlag, parseFlags, stringFlag, type FlagSpec } from '../../../lib/flags.js';

const SPECS: Readonly<Record<string, FlagSpec>> = {
  endpoint: { type: 'string', default: 'unix:///csi/csi.sock', help: 'e' },
  nodeid: { type: 'string', help: 'n' },
  rotate: { type: 'boolean', default: false, help: 'r' },
  verbose: { type: 'boolean', help: 'v' },
  v: { type: 'string', ignored: true, default: '2', help: 'ignored' },
  health: { type: 'boolean', ignored: true, help: 'ignored' },
};

describe('parseFlags', () => {
  const valid: [string, string[], Record<string, string | boolean>][] = [
    ['--a=b', ['--nodeid=n1'], { nodeid: 'n1' }],
    ['--a b', ['--nodeid', 'n1'], { nodeid: 'n1' }],
    ['-a=b', ['-nodeid=n1'], { nodeid: 'n1' }],
    ['-a b', ['-nodeid', 'n1'], { nodeid: 'n1' }],
    ['value with =', ['--nodeid=a=b'], { nodeid: 'a=b' }],
    ['empty value', ['--endpoint='], { endpoint: '' }],
    ['value starting with -', ['--nodeid', '-x'], { nodeid: '-x' }],
    ['boolean --x', ['--rotate'], { rotate: true }],
    ['boolean --x=false', ['--rotate=false'], { rotate: false }],
    ['boolean --x=true', ['--rotate=true'], { rotate: true }],
    ['boolean --x=0', ['--rotate=0'], { rotate: false }],
    ['boolean --x=1', ['--rotate=1'], { rotate: true }],
    ['boolean --x=F', ['--rotate=F'], { rotate: false }],
    ['boolean --x=TRUE', ['--rotate=TRUE'], { rotate: true }],
    ['last one wins', ['--nodeid=a', '--nodeid=b'], { nodeid: 'b' }],
  ];
  const defaults = { endpoint: 'unix:///csi/csi.sock', rotate: false };
  for (const [name, argv, expected] of valid) {
    it(`parses ${name}: ${argv.join(' ')}`, () => {
      const parsed = parseFlags(argv, SPECS);
      expect(parsed.values).to.deep.equal({ ...defaults, ...expected });
      expect(parsed.positionals).to.deep.equal([]);
      expect(parsed.ignoredGiven).to.deep.equal([]);
    });
  }

  it('fills defaults and leaves flags without a default absent', () => {
    const parsed = parseFlags([], SPECS);
    expect(parsed.values).to.deep.equal({ endpoint: 'unix:///csi/csi.sock', rotate: false });
    expect(stringFlag(parsed, 'nodeid')).to.equal('');
    expect(booleanFlag(parsed, 'verbose')).to.equal(false);
    expect(booleanFlag(parsed, 'rotate')).to.equal(false);
  });

  it('a boolean given without value does not consume the next argument', () => {
    const parsed = parseFlags(['--rotate', 'false'], SPECS);
    expect(parsed.values['rotate']).to.equal(true);
    expect(parsed.positionals).to.deep.equal(['false']);
  });

  it('collects ignored upstream flags in ignoredGiven, once each, never in values (not even their default)', () => {
    const parsed = parseFlags(['--v=5', '--health', '-v', '3', '--nodeid=n'], SPECS);
    expect(parsed.ignoredGiven).to.deep.equal(['v', 'health']);
    expect([...parsed.given]).to.deep.equal(['v', 'health', 'nodeid']);
    expect(parsed.values).to.not.have.property('v');
    expect(parsed.values).to.not.have.property('health');
    expect(parsed.values['nodeid']).to.equal('n');
    expect(parsed.positionals).to.deep.equal([]);
  });

  it('collects positionals, "-" and everything after "--" verbatim', () => {
    const parsed = parseFlags(['one', '-', '--nodeid=n', '--', '--rotate', '--unknown', 'two'], SPECS);
    expect(parsed.positionals).to.deep.equal(['one', '-', '--rotate', '--unknown', 'two']);
    expect(parsed.values['rotate']).to.equal(false);
    expect(parsed.values['nodeid']).to.equal('n');
  });

  const invalid: [string[], string][] = [
    [['--bogus'], 'unknown flag --bogus'],
    [['--bogus=1'], 'unknown flag --bogus'],
    [['-bogus', 'x'], 'unknown flag --bogus'],
    [['--nodeid'], 'flag --nodeid needs a value'],
    [['--endpoint=x', '--nodeid'], 'flag --nodeid needs a value'],
    [['--rotate=yes'], 'flag --rotate takes true or false, got "yes"'],
    [['--rotate='], 'flag --rotate takes true or false, got ""'],
    // Go's strconv.ParseBool takes true, True, TRUE (and false alike), t, T, f, F, 1, 0 only.
    [['--rotate=tRUE'], 'flag --rotate takes true or false, got "tRUE"'],
  ];
  for (const [argv, message] of invalid) {
    it(`rejects ${argv.join(' ')} with "${message}"`, () => {
      expect(() => parseFlags(argv, SPECS))
        .to.throw(Error)
        .with.property('message', message);
    });
  }
});
