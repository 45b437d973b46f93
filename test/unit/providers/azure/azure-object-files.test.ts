import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { mountFiles } from '../../../../providers/azure/object-files.js';
import { objectId, parseKeyVaultObjects, type KeyVaultObject } from '../../../../providers/azure/objects.js';
import type { PlannedEntry } from '../../../../providers/azure/mount-plan.js';
import type { RenderedContent } from '../../../../providers/azure/render.js';

// The files a Mount answers with, and their modes. Every file carries a real mode: the
// object's filePermission, else the Mount's permission. Mode 0 is not "the default" to
// upstream's Go driver v1.6.1, whose atomic writer chmods each file to exactly the mode
// given: a 0 there left the files mode 000, unreadable by the pod (found by
// go-driver-azure-provider.test.ts).

function entry(body: string): PlannedEntry {
  const yaml = `array:\n  - |\n${body
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
  const object = parseKeyVaultObjects(yaml).objects[0] as KeyVaultObject;
  return { object, id: objectId(object), fileName: object.fileName, version: '' };
}

const bytes = (suffix: RenderedContent['suffix'], text: string): RenderedContent => ({
  suffix,
  bytes: Buffer.from(text),
});

describe('azure mountFiles (file names and modes)', () => {
  const cases: {
    name: string;
    objects: string;
    contents: RenderedContent[];
    permission: number;
    want: [string, number][];
  }[] = [
    {
      name: "no filePermission: the Mount's permission",
      objects: 'objectName: db\nobjectType: secret',
      contents: [bytes('', 'v')],
      permission: 0o644,
      want: [['db', 0o644]],
    },
    {
      name: 'no filePermission, another Mount permission',
      objects: 'objectName: db\nobjectType: secret',
      contents: [bytes('', 'v')],
      permission: 0o440,
      want: [['db', 0o440]],
    },
    {
      name: 'filePermission wins',
      objects: 'objectName: db\nobjectType: secret\nfilePermission: "0400"',
      contents: [bytes('', 'v')],
      permission: 0o644,
      want: [['db', 0o400]],
    },
    {
      name: 'objectAlias names the file',
      objects: 'objectName: db\nobjectType: secret\nobjectAlias: db.txt',
      contents: [bytes('', 'v')],
      permission: 0o644,
      want: [['db.txt', 0o644]],
    },
    {
      name: '.crt/.key files of --write-cert-and-key-in-separate-files get the same mode',
      objects: 'objectName: tls\nobjectType: secret',
      contents: [bytes('', 'pem'), bytes('.crt', 'c'), bytes('.key', 'k')],
      permission: 0o644,
      want: [
        ['tls', 0o644],
        ['tls.crt', 0o644],
        ['tls.key', 0o644],
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const files = mountFiles([{ entry: entry(c.objects), contents: c.contents }], c.permission);
      expect(files.map((f) => [f.path, f.mode])).to.deep.equal(c.want);
    });
  }

  it('never answers mode 0 for an object without filePermission', () => {
    const files = mountFiles(
      [
        { entry: entry('objectName: a\nobjectType: secret'), contents: [bytes('', 'x')] },
        { entry: entry('objectName: b\nobjectType: key'), contents: [bytes('', 'y')] },
      ],
      0o644,
    );
    expect(files.every((f) => f.mode !== 0)).to.equal(true);
  });

  it('refuses two objects writing one path, naming both', () => {
    const a = entry('objectName: tls\nobjectType: secret\nobjectAlias: x');
    const b = entry('objectName: other\nobjectType: cert\nobjectAlias: x');
    expect(() =>
      mountFiles(
        [
          { entry: a, contents: [bytes('', '1')] },
          { entry: b, contents: [bytes('', '2')] },
        ],
        0o644,
      ),
    ).to.throw(SscError, /"secret\/tls" and "cert\/other" both write "x"/);
  });
});
