import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import {
  filePermissionField,
  parseObjectList,
  readObjectEntry,
  type ObjectListRules,
} from '../../../../providers/framework/object-list.js';
import { invalidParameterOf } from '../../../../providers/framework/parameter-errors.js';

const invalid = invalidParameterOf('test');
const RULES: ObjectListRules = {
  invalid,
  known: new Set(['objectName', 'path', 'filePermission']),
  kind: 'a test object',
};

interface Read {
  readonly objectName: string;
  readonly path: string | undefined;
  readonly pathField: string;
  readonly mode: number | undefined;
}

/** Each entry read as the vault and exec providers read theirs, and the warnings. */
function parse(raw: string | undefined): { objects: Read[]; warnings: string[] } {
  const warnings: string[] = [];
  const objects = parseObjectList(
    raw,
    3,
    { ...RULES, required: 'objects is required: a YAML list' },
    (entry, i, doc) => {
      const e = readObjectEntry(entry, i, doc, RULES, warnings);
      return {
        objectName: e.objectName,
        path: e.string('path'),
        pathField: e.field('path'),
        mode: filePermissionField(e, invalid),
      };
    },
  );
  return { objects, warnings };
}

function refusal(raw: string | undefined): string {
  try {
    parse(raw);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return (err as SscError).message;
  }
  throw new Error('expected a refusal');
}

describe('parseObjectList and readObjectEntry', () => {
  it('reads each entry in order, naming its fields with its index and objectName', () => {
    expect(parse('- objectName: a\n- objectName: b/c\n  path: x\n')).to.deep.equal({
      objects: [
        { objectName: 'a', path: undefined, pathField: 'objects[0] ("a").path', mode: undefined },
        { objectName: 'b/c', path: 'x', pathField: 'objects[1] ("b/c").path', mode: undefined },
      ],
      warnings: [],
    });
  });

  it('follows aliases to entries, and warns about the fields it does not know', () => {
    expect(parse('- &e {objectName: a, pth: x, "": y}\n- {objectName: b}\n').warnings).to.deep.equal([
      'objects[0] ("a").pth is not a field of a test object; ignored',
      'objects[0] ("a").(key) is not a field of a test object; ignored',
    ]);
  });

  const refused: [name: string, raw: string | undefined, message: string][] = [
    ['an absent parameter', undefined, 'test provider: objects is required: a YAML list'],
    ['a blank parameter', '  \n', 'test provider: objects is required: a YAML list'],
    ['a map', 'objectName: a', 'test provider: objects must be a non-empty YAML list'],
    ['an empty list', '[]', 'test provider: objects must be a non-empty YAML list'],
    [
      'too many entries',
      '[{objectName: a}, {objectName: b}, {objectName: c}, {objectName: d}]',
      'test provider: objects lists 4 entries; at most 3 are allowed per class',
    ],
    ['YAML that does not parse', '- [a', 'test provider: objects is not valid YAML: '],
    ['an entry that is a scalar', '- a', 'test provider: objects[0] must be a map, not a scalar'],
    ['an entry that is null', '- ~', 'test provider: objects[0] must be a map, not null'],
    ['no objectName', '- path: x', 'test provider: objects[0].objectName is required'],
    ['an empty objectName', '- objectName: ""', 'test provider: objects[0].objectName is required'],
    [
      'an objectName that is a map',
      '- objectName: {a: 1}',
      'test provider: objects[0].objectName must be a string, not a map',
    ],
    [
      'an objectName that climbs out',
      '- objectName: ../x',
      'test provider: objects[0] ("../x").objectName is not a file name the volume can hold: ',
    ],
    [
      'an absolute objectName',
      '- objectName: /etc/x',
      'test provider: objects[0] ("/etc/x").objectName is not a file name the volume can hold: ',
    ],
    [
      'an objectName listed twice',
      '- objectName: a\n- objectName: b\n- objectName: a',
      'test provider: objects[2].objectName "a" is listed twice; each objectName must be unique',
    ],
    [
      'a field that is a list',
      '- objectName: a\n  path: [x]',
      'test provider: objects[0] ("a").path must be a string, not a list',
    ],
  ];
  for (const [name, raw, message] of refused) {
    it(`refuses ${name}`, () => expect(refusal(raw).startsWith(message), refusal(raw)).to.equal(true));
  }
});

describe('filePermissionField', () => {
  const read: [yaml: string, expected: number | undefined][] = [
    ['0600', 0o600],
    ['0o640', 0o640],
    ['384', 0o600],
    ['"0400"', 0o400],
    ['0777', 0o777],
    ['0', undefined],
    ['~', undefined],
  ];
  for (const [yaml, expected] of read) {
    it(`reads ${yaml} as ${expected === undefined ? 'unset' : expected.toString(8)}`, () =>
      expect(parse(`- objectName: a\n  filePermission: ${yaml}\n`).objects[0]?.mode).to.equal(expected));
  }
  for (const yaml of ['01000', '-1', '1.5', 'rw', '{a: 1}']) {
    it(`refuses ${yaml}`, () =>
      expect(refusal(`- objectName: a\n  filePermission: ${yaml}\n`)).to.equal(
        'test provider: objects[0] ("a").filePermission must be a file mode from 0 to 0777, such as 0600 (octal) or 384',
      ));
  }
});
