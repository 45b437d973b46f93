import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import {
  hasVersionHistory,
  historyFileName,
  historyObjectId,
  objectId,
  parseKeyVaultObjects,
  type KeyVaultObject,
} from '../../../../providers/azure/objects.js';

// The `objects` parameter as Azure's provider v1.8.2 reads it: yaml.v3 into
// {array: []string}, each string into KeyVaultObject, fields trimmed, validate.go.

const entry = (body: string) =>
  `  - |\n${body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
const objectsOf = (...bodies: string[]) => `array:\n${bodies.map(entry).join('')}`;

function only(body: string): KeyVaultObject {
  const { objects } = parseKeyVaultObjects(objectsOf(body));
  expect(objects).to.have.length(1);
  return objects[0] as KeyVaultObject;
}

function failure(raw: string | undefined): string {
  try {
    parseKeyVaultObjects(raw);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return (err as SscError).message;
  }
  throw new Error('expected the objects to be refused');
}

describe('azure objects', () => {
  it("reads upstream's documented shape with defaults filled in", () => {
    const { objects, warnings } = parseKeyVaultObjects(
      objectsOf(
        'objectName: secret1\nobjectType: secret\nobjectVersion: ""',
        'objectName: key1\nobjectType: key\nobjectAlias: key1.pem\nobjectVersion: ""',
      ),
    );
    expect(warnings).to.deep.equal([]);
    expect(objects[0]).to.deep.equal({
      objectName: 'secret1',
      objectType: 'secret',
      objectAlias: undefined,
      objectVersion: undefined,
      objectVersionHistory: 0,
      objectFormat: 'pem',
      objectEncoding: 'utf-8',
      filePermission: undefined,
      fileName: 'secret1',
    });
    expect(objects[1]?.fileName).to.equal('key1.pem');
  });

  it('ids and file names as upstream GetObjectUID and getLatestNKeyVaultObjects', () => {
    const o = only('objectName: db\nobjectType: secret\nobjectAlias: app/db\nobjectVersionHistory: 3');
    expect([objectId(o), historyObjectId(o, 2), historyFileName(o, 2), hasVersionHistory(o)]).to.deep.equal([
      'secret/db',
      'secret/db/2',
      'app/db/2',
      true,
    ]);
    expect(hasVersionHistory(only('objectName: db\nobjectType: secret\nobjectVersionHistory: 1'))).to.equal(false);
  });

  const quirks: [string, string, Partial<KeyVaultObject>][] = [
    [
      'fields are trimmed (formatKeyVaultObject)',
      'objectName: "  db  "\nobjectType: " secret\\t"\nobjectAlias: " a.txt "',
      { objectName: 'db', objectType: 'secret', fileName: 'a.txt' },
    ],
    [
      "any scalar is a string field's text as written (0600 stays 0600)",
      'objectName: 0600\nobjectType: secret\nfilePermission: 0640',
      { objectName: '0600', filePermission: 0o640 },
    ],
    [
      'filePermission is octal text (ParseInt base 8): "644" is 0644',
      'objectName: a\nobjectType: secret\nfilePermission: "644"',
      { filePermission: 0o644 },
    ],
    [
      'objectVersion latest means the latest',
      'objectName: a\nobjectType: secret\nobjectVersion: latest',
      { objectVersion: undefined },
    ],
    [
      'a pinned version',
      'objectName: a\nobjectType: secret\nobjectVersion: 0123456789abcdef0123456789abcdef',
      { objectVersion: '0123456789abcdef0123456789abcdef' },
    ],
    [
      'objectFormat and objectEncoding in any case',
      'objectName: a\nobjectType: secret\nobjectFormat: PFX\nobjectEncoding: Base64',
      { objectFormat: 'pfx', objectEncoding: 'base64' },
    ],
    [
      'objectVersionHistory: Go base-0 integers',
      'objectName: a\nobjectType: secret\nobjectVersionHistory: 0x10',
      { objectVersionHistory: 16 },
    ],
    [
      'objectVersionHistory: a float truncates (yaml.v3 float64 → SetInt)',
      'objectName: a\nobjectType: secret\nobjectVersionHistory: 2.9',
      { objectVersionHistory: 2 },
    ],
    [
      'objectVersionHistory: negative is a single version',
      'objectName: a\nobjectType: secret\nobjectVersionHistory: -3',
      { objectVersionHistory: 0 },
    ],
    [
      'null fields are unset',
      'objectName: a\nobjectType: secret\nobjectAlias: ~\nobjectEncoding: null',
      { objectAlias: undefined, objectEncoding: 'utf-8' },
    ],
    [
      'upstream ignores objectFormat PFX (not lowercase) on a cert',
      'objectName: a\nobjectType: cert\nobjectFormat: PFX',
      { objectType: 'cert' },
    ],
  ];
  for (const [name, body, expected] of quirks) {
    it(name, () => expect(only(body)).to.include(expected));
  }

  it('an empty array, or none, is no objects (upstream answers with no files)', () => {
    expect(parseKeyVaultObjects('array: []').objects).to.deep.equal([]);
    expect(parseKeyVaultObjects('other: 1')).to.deep.equal({
      objects: [],
      warnings: ['objects has no "array:" entries: nothing is mounted'],
    });
  });

  it('unknown fields are warnings naming the object', () => {
    expect(
      parseKeyVaultObjects(objectsOf('objectName: a\nobjectType: secret\nobjectname: typo')).warnings,
    ).to.deep.equal(['objects.array[0] ("a").objectname is not a field of an Azure Key Vault object; ignored']);
  });

  const refusals: [string, string | undefined, RegExp][] = [
    ['no objects', undefined, /objects is required/],
    ['blank objects', ' \n', /objects is required/],
    ['bad YAML', 'array: [', /objects is not valid YAML/],
    ['a list at the root', '- a', /objects must be a YAML map with an "array:" list, not a list/],
    ['array not a list', 'array: x', /objects\.array must be a list of YAML strings, not a scalar/],
    [
      'an entry written as a map (yaml.v3: cannot unmarshal !!map into string)',
      'array:\n  - objectName: a\n    objectType: secret\n',
      /objects\.array\[0\] must be a YAML string \(write "- \|" before the object's fields\), not a map/,
    ],
    ['an entry that is not a map', 'array:\n  - just text\n', /objects\.array\[0\] must hold a YAML map/],
    ['an entry with bad YAML', objectsOf('objectName: [a'), /objects\.array\[0\] is not valid YAML/],
    ['no objectName', objectsOf('objectType: secret'), /objects\.array\[0\]\.objectName is required/],
    [
      'a map as objectName',
      objectsOf('objectName: {a: 1}\nobjectType: secret'),
      /objects\.array\[0\]\.objectName must be a string, not a map/,
    ],
    [
      'a name Key Vault cannot hold',
      objectsOf('objectName: a_b\nobjectType: secret'),
      /\("a_b"\)\.objectName must be a Key Vault object name/,
    ],
    ['no objectType', objectsOf('objectName: a'), /\("a"\)\.objectType must be secret, key or cert, not ""/],
    [
      'objectType in another case (upstream switch is case-sensitive)',
      objectsOf('objectName: a\nobjectType: Secret'),
      /objectType must be secret, key or cert, not "Secret"/,
    ],
    [
      'an unknown objectFormat',
      objectsOf('objectName: a\nobjectType: secret\nobjectFormat: der'),
      /objectFormat must be pem or pfx, not "der"/,
    ],
    [
      'pfx for a key',
      objectsOf('objectName: a\nobjectType: key\nobjectFormat: pfx'),
      /objectFormat pfx is only supported for objectType: secret/,
    ],
    [
      'objectEncoding for a cert',
      objectsOf('objectName: a\nobjectType: cert\nobjectEncoding: hex'),
      /objectEncoding is only supported for objectType: secret/,
    ],
    [
      'an unknown objectEncoding',
      objectsOf('objectName: a\nobjectType: secret\nobjectEncoding: utf-16'),
      /objectEncoding must be utf-8, base64 or hex, not "utf-16"/,
    ],
    [
      'a version with a slash',
      objectsOf('objectName: a\nobjectType: secret\nobjectVersion: a/b'),
      /objectVersion must be a Key Vault version id/,
    ],
    [
      'a bad filePermission (upstream silently writes mode 0)',
      objectsOf('objectName: a\nobjectType: secret\nfilePermission: rw-r--r--'),
      /filePermission must be an octal file mode from 0 to 0777, such as "0644", not "rw-r--r--"/,
    ],
    [
      'filePermission 0o644 (ParseInt base 8 takes no prefix)',
      objectsOf('objectName: a\nobjectType: secret\nfilePermission: 0o644'),
      /filePermission must be an octal file mode/,
    ],
    [
      'filePermission above 0777',
      objectsOf('objectName: a\nobjectType: secret\nfilePermission: 4755'),
      /filePermission must be an octal file mode from 0 to 0777/,
    ],
    [
      'an absolute alias',
      objectsOf('objectName: a\nobjectType: secret\nobjectAlias: /etc/passwd'),
      /objectAlias "\/etc\/passwd" is not a file name the volume can hold: path is absolute/,
    ],
    [
      'an alias with ..',
      objectsOf('objectName: a\nobjectType: secret\nobjectAlias: x/../../y'),
      /path has a "\.\." element/,
    ],
    [
      'a quoted non-number history',
      objectsOf('objectName: a\nobjectType: secret\nobjectVersionHistory: many'),
      /objectVersionHistory must be a whole number of versions, not "many"/,
    ],
    [
      'a huge history',
      objectsOf('objectName: a\nobjectType: secret\nobjectVersionHistory: 5000'),
      /objectVersionHistory is 5000; at most 1000/,
    ],
    [
      'two objects writing one file',
      objectsOf('objectName: a\nobjectType: secret', 'objectName: b\nobjectType: key\nobjectAlias: a'),
      /objects\.array\[0\] and objects\.array\[1\] both write "a": give one an objectAlias/,
    ],
    [
      "a file inside another object's history directory",
      objectsOf(
        'objectName: a\nobjectType: secret\nobjectVersionHistory: 2',
        'objectName: b\nobjectType: secret\nobjectAlias: a/0',
      ),
      /objects\.array\[1\] writes "a\/0" inside objects\.array\[0\]'s "a"/,
    ],
    [
      'more than 1000 files',
      objectsOf(
        ...Array.from({ length: 11 }, (_, i) => `objectName: s${i}\nobjectType: secret\nobjectVersionHistory: 100`),
      ),
      /objects asks for 1100 files/,
    ],
  ];
  for (const [name, raw, message] of refusals) {
    it(`refuses ${name}`, () => expect(failure(raw)).to.match(message));
  }
});
