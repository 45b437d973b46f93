import { expect } from 'chai';
import { parseFileObjects } from '../../../../providers/file/config.js';
import { SscError } from '../../../../lib/errors.js';

function failure(objects: string | undefined): SscError {
  try {
    parseFileObjects(objects === undefined ? {} : { objects });
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return err as SscError;
  }
  throw new Error('expected the objects to be rejected');
}

describe('parseFileObjects', () => {
  it('parses a YAML list, sourcePath defaulting to objectName', () => {
    const objects =
      '- objectName: username\n- objectName: db/password\n  sourcePath: secrets/db-pass.txt\n  mode: "0600"\n';
    expect(parseFileObjects({ objects, other: 'x' })).to.deep.equal([
      { objectName: 'username', sourcePath: 'username', mode: undefined },
      { objectName: 'db/password', sourcePath: 'secrets/db-pass.txt', mode: 0o600 },
    ]);
  });

  it('accepts a flow-style (JSON) list', () => {
    expect(parseFileObjects({ objects: '[{"objectName":"a","mode":420}]' })).to.deep.equal([
      { objectName: 'a', sourcePath: 'a', mode: 0o644 },
    ]);
  });

  const modes: [string, number | undefined][] = [
    ['"0600"', 0o600],
    ['"600"', 0o600],
    ['384', 384],
    ['"0"', 0],
    ['"7"', 7],
    ['"0777"', 0o777],
    ['0', 0],
    ['511', 511],
    ['""', undefined],
    ['null', undefined],
    ['~', undefined],
  ];
  for (const [yaml, mode] of modes) {
    it(`mode ${yaml} → ${mode === undefined ? 'default' : `0${mode.toString(8)}`}`, () => {
      expect(parseFileObjects({ objects: `- objectName: a\n  mode: ${yaml}\n` })[0]?.mode).to.equal(mode);
    });
  }

  const OCTAL = 'file provider: objects[0].mode must be an octal string such as "0600"';
  const RANGE = 'file provider: objects[0].mode must be between 0000 and 0777';
  const invalid: [string, string | undefined, string][] = [
    [
      'missing objects',
      undefined,
      'file provider: parameter "objects" is required (a YAML list of objectName/sourcePath)',
    ],
    ['blank objects', '  \n', 'file provider: parameter "objects" is required (a YAML list of objectName/sourcePath)'],
    ['a map', 'objectName: a', 'file provider: parameter "objects" must be a non-empty YAML list'],
    ['a scalar', 'hello', 'file provider: parameter "objects" must be a non-empty YAML list'],
    ['an empty list', '[]', 'file provider: parameter "objects" must be a non-empty YAML list'],
    ['entry not a map', '- a', 'file provider: objects[0] must be a map'],
    ['entry a list', '- [a]', 'file provider: objects[0] must be a map'],
    ['missing objectName', '- objectName: a\n- sourcePath: b', 'file provider: objects[1].objectName is required'],
    ['objectName a number', '- objectName: 5', 'file provider: objects[0].objectName is required'],
    [
      'duplicate objectName',
      '- objectName: a\n- objectName: b\n- objectName: a\n  sourcePath: c',
      'file provider: objects[2].objectName "a" is listed twice',
    ],
    [
      'empty sourcePath',
      '- objectName: a\n  sourcePath: ""',
      'file provider: objects[0].sourcePath must be a non-empty string',
    ],
    [
      'sourcePath a number',
      '- objectName: a\n  sourcePath: 5',
      'file provider: objects[0].sourcePath must be a non-empty string',
    ],
    ['mode "0999"', '- objectName: a\n  mode: "0999"', OCTAL],
    ['mode "rw-r--r--"', '- objectName: a\n  mode: rw-r--r--', OCTAL],
    ['mode "01777"', '- objectName: a\n  mode: "01777"', OCTAL],
    ['mode true', '- objectName: a\n  mode: true', OCTAL],
    ['mode 512', '- objectName: a\n  mode: 512', RANGE],
    ['mode -1', '- objectName: a\n  mode: -1', RANGE],
    ['mode 1.5', '- objectName: a\n  mode: 1.5', RANGE],
  ];
  for (const [name, objects, message] of invalid) {
    it(`rejects ${name}`, () => expect(failure(objects).message).to.equal(message));
  }

  it("rejects bad YAML with the parser's first line", () => {
    const message = failure('- objectName: [a\n').message;
    expect(message).to.match(/^file provider: parameter "objects" is not valid YAML: \S/);
    expect(message).to.not.include('\n');
  });

  it('reads an unquoted YAML 1.1 octal mode as octal, as Go providers do', () => {
    expect(parseFileObjects({ objects: '- objectName: a\n  mode: 0400\n' })[0]?.mode).to.equal(0o400);
  });
});
