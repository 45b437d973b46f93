import { expect } from 'chai';
import { MAX_YAML_PARAMETER_BYTES, parseYamlParameter } from '../../../../providers/framework/go-yaml.js';
import { parseKeyVaultObjects } from '../../../../providers/azure/objects.js';
import { parseObjects } from '../../../../providers/vault/objects.js';
import { SscError } from '../../../../lib/errors.js';

// Class parameters are written by whoever may create a SecretProviderClass; parsing them
// must stay cheap (it runs on every Mount and every rotation round, on the provider's one
// thread) whatever they hold.

describe('YAML class parameters are parsed bounded and in linear time', () => {
  it('refuses text over the limit, naming the parameter', () => {
    expect(() => parseYamlParameter(`a: ${'x'.repeat(MAX_YAML_PARAMETER_BYTES)}`, 'objects')).to.throw(
      /objects is \d+ bytes; at most 262144 are read/,
    );
  });

  it("a map's keys are checked in linear time: 4× the keys take far less than 16× as long (the yaml package's unique-key check is quadratic)", () => {
    const ms = (keys: number): number => {
      const text = Array.from({ length: keys }, (_, i) => `k${i}: v`).join('\n');
      let best = Infinity;
      // The best of three: a GC pause or a busy machine only ever adds time.
      for (let run = 0; run < 3; run++) {
        const started = process.hrtime.bigint();
        parseYamlParameter(text, 'objects');
        best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
      }
      return best;
    };
    ms(2_000); // warm up the parser
    expect(ms(20_000) / ms(5_000)).to.be.lessThan(8);
  });

  it('a key defined twice in one map is an error, as yaml.v3\'s "already defined"', () => {
    expect(() => parseYamlParameter('a: 1\nb: 2\na: 3\n', 'objects')).to.throw(/mapping key "a" is defined twice/);
    expect(() => parseYamlParameter('- {a: 1, a: 2}\n', 'objects')).to.throw(/mapping key "a" is defined twice/);
    parseYamlParameter('- a: 1\n- a: 2\n', 'objects');
  });

  it('azure objects: thousands of ignored fields warn ten times, not thousands', () => {
    const fields = Array.from({ length: 5_000 }, (_, i) => `      junk${i}: x`).join('\n');
    const { warnings } = parseKeyVaultObjects(
      `array:\n  - |\n      objectName: db\n      objectType: secret\n${fields}\n`,
    );
    expect(warnings).to.have.length(11);
    expect(warnings[10]).to.equal('… and 4990 more ignored fields');
  });

  it('azure objects: aliases repeating one long entry are refused before any entry is parsed', () => {
    const long = `objectName: db\nobjectType: secret\npad: ${'x'.repeat(20_000)}`;
    const text = `array:\n  - &e ${JSON.stringify(long)}\n${Array.from({ length: 100 }, () => '  - *e').join('\n')}\n`;
    expect(() => parseKeyVaultObjects(text)).to.throw(
      SscError,
      /entries hold \d+ bytes of YAML together \(aliases expanded\)/,
    );
  });

  it('azure objects: more entries than allowed are refused before any is parsed', () => {
    const text = `array:\n${Array.from({ length: 1_001 }, () => '  - "objectName: db"').join('\n')}\n`;
    expect(() => parseKeyVaultObjects(text)).to.throw(SscError, /objects.array lists 1001 entries; at most 1000/);
  });

  it('vault objects: the same bounds', () => {
    expect(() => parseObjects(`- objectName: a\n  secretPath: ${'x'.repeat(MAX_YAML_PARAMETER_BYTES)}\n`)).to.throw(
      SscError,
      /at most 262144 are read/,
    );
    expect(() => parseObjects('- objectName: a\n  objectName: b\n  secretPath: s\n')).to.throw(
      SscError,
      /"objectName" is defined twice/,
    );
  });
});
