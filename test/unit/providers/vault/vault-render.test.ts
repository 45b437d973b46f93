import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { SscError } from '../../../../lib/errors.js';
import { parseObjects, type VaultObject } from '../../../../providers/vault/objects.js';
import { objectVersion, renderContents, renderObject } from '../../../../providers/vault/render.js';
import { stableJson } from '../../../../providers/vault/stable-json.js';

const KEY = Buffer.alloc(32, 1);
const SECRET = 's3cr3t-Zq9';

function object(fields: string): VaultObject {
  return parseObjects(`- objectName: db\n  secretPath: secret/data/db\n${fields}`).objects[0] as VaultObject;
}

function failure(o: VaultObject, data: Record<string, unknown>): SscError {
  try {
    renderContents(o, data);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).message).to.not.include(SECRET);
    return err as SscError;
  }
  throw new Error('expected the render to fail');
}

describe('vault stableJson', () => {
  const table: [string, unknown, string][] = [
    [
      'sorts keys at every depth',
      { b: 1, a: { d: [{ z: 1, y: 2 }], c: null } },
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    ],
    [
      'sorts integer-like keys as strings (JS objects would put them first)',
      { b: 1, 10: 2, 9: 3 },
      '{"10":2,"9":3,"b":1}',
    ],
    [
      'sorts by UTF-8 bytes, as Go does (U+FF01 before U+1F600)',
      { '\u{1F600}': 1, '\uFF01': 2 },
      '{"\uFF01":2,"\u{1F600}":1}',
    ],
    [
      'escapes <, >, & and U+2028/9 as Go does',
      { k: '<a href="x">&\u2028\u2029' },
      '{"k":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u2028\\u2029"}',
    ],
    ['keeps a "__proto__" key as data', JSON.parse('{"__proto__":{"x":1},"a":true}'), '{"__proto__":{"x":1},"a":true}'],
    ['writes scalars compactly', [1.5, -0, 'x', false, null], '[1.5,0,"x",false,null]'],
  ];
  for (const [name, value, json] of table) it(name, () => expect(stableJson(value)).to.equal(json));

  it('gives the same bytes whatever order the keys came in', () => {
    expect(stableJson(JSON.parse('{"user":"u","password":"p","meta":{"b":1,"a":2}}'))).to.equal(
      stableJson(JSON.parse('{"meta":{"a":2,"b":1},"password":"p","user":"u"}')),
    );
  });
});

describe('vault renderContents', () => {
  const data = {
    password: SECRET,
    port: 5432,
    tls: { ca: 'x', b: true },
    list: ['a', 1],
    none: null,
    b64: Buffer.from('bytes\u0000!').toString('base64'),
    hex: 'DEADbeef',
  };

  const table: [string, string, string][] = [
    ['a string value as is', '  secretKey: password\n', SECRET],
    ['a number as JSON', '  secretKey: port\n', '5432'],
    ['a map as stable JSON', '  secretKey: tls\n', '{"b":true,"ca":"x"}'],
    ['a list as JSON', '  secretKey: list\n', '["a",1]'],
    ['null as JSON', '  secretKey: none\n', 'null'],
  ];
  for (const [name, fields, text] of table) {
    it(`renders ${name}`, () => expect(renderContents(object(fields), data).toString('utf8')).to.equal(text));
  }

  it('without secretKey renders the whole data as stable JSON', () => {
    expect(renderContents(object(''), { user: 'u', password: 'p' }).toString()).to.equal('{"password":"p","user":"u"}');
    expect(renderContents(object('  encoding: base64\n'), { a: 1 }).toString()).to.equal('{"a":1}');
  });

  it('decodes base64 and hex into bytes', () => {
    expect(renderContents(object('  secretKey: b64\n  encoding: base64\n'), data)).to.deep.equal(
      Buffer.from('bytes\u0000!'),
    );
    expect(renderContents(object('  secretKey: hex\n  encoding: hex\n'), data)).to.deep.equal(
      Buffer.from([0xde, 0xad, 0xbe, 0xef]),
    );
  });

  // Which texts decode is framework go-encoding.ts's (its tests); here: the message, never the value.
  const badBase64 = [`${SECRET}`, 'YWJj ZGVm'];
  for (const value of badBase64) {
    it(`refuses base64 ${JSON.stringify(value === SECRET ? 'the secret' : value)} without showing it`, () => {
      const err = failure(object('  secretKey: k\n  encoding: base64\n'), { k: value });
      expect([err.kind, err.reason]).to.deep.equal(['invalid-argument', 'InvalidSecretEncoding']);
      expect(err.message).to.equal(
        'vault provider: object "db": secret "secret/data/db": the value of key "k" is not valid base64 (encoding: base64)',
      );
    });
  }

  const badHex = [SECRET, 'abc'];
  for (const value of badHex) {
    it(`refuses hex ${JSON.stringify(value === SECRET ? 'the secret' : value)} without showing it`, () => {
      const err = failure(object('  secretKey: k\n  encoding: hex\n'), { k: value });
      expect(err.message).to.equal(
        'vault provider: object "db": secret "secret/data/db": the value of key "k" is not valid hex (encoding: hex)',
      );
    });
  }

  it('a missing key is NOT_FOUND naming the path and key, never a value', () => {
    const err = failure(object('  secretKey: passwd\n'), { password: SECRET });
    expect([err.kind, err.reason]).to.deep.equal(['not-found', 'SecretKeyNotFound']);
    expect(err.message).to.equal('vault provider: object "db": secret "secret/data/db" has no key "passwd"');
  });

  it('a key inherited from Object.prototype is missing, not picked', () => {
    expect(failure(object('  secretKey: toString\n'), { password: SECRET }).kind).to.equal('not-found');
  });
});

describe('vault renderObject and objectVersion', () => {
  it("uses filePermission, else the Mount's permission", () => {
    expect(renderObject(object('  secretKey: k\n  filePermission: 0400\n'), { k: 'v' }, 0o644, KEY).file).to.deep.equal(
      { path: 'db', mode: 0o400, contents: Buffer.from('v') },
    );
    expect(renderObject(object('  secretKey: k\n'), { k: 'v' }, 0o640, KEY).file.mode).to.equal(0o640);
  });

  it('the version is the same for the same key, object and contents, whatever the key order of the data', () => {
    const a = renderObject(object(''), JSON.parse('{"u":"x","p":"y"}'), 0o644, KEY);
    const b = renderObject(object(''), JSON.parse('{"p":"y","u":"x"}'), 0o644, Buffer.from(KEY));
    expect(a.version).to.deep.equal(b.version);
    expect(a.version.id).to.equal('db');
    expect(a.version.version).to.match(/^[0-9a-f]{64}$/);
  });

  it('the version changes with the contents, the key and every field of the object, and never shows the contents', () => {
    const base = object('  secretKey: k\n');
    const v = objectVersion(KEY, base, Buffer.from(SECRET));
    expect(v).to.not.include(SECRET);
    const others = [
      objectVersion(KEY, base, Buffer.from(`${SECRET}!`)),
      objectVersion(Buffer.alloc(32, 2), base, Buffer.from(SECRET)),
      ...[
        '  secretKey: k2\n',
        '  secretKey: k\n  filePermission: 0600\n',
        '  secretKey: k\n  encoding: hex\n',
        '  secretKey: k\n  method: PUT\n',
        '  secretKey: k\n  secretArgs: {ttl: 1h}\n',
      ].map((f) => objectVersion(KEY, object(f), Buffer.from(SECRET))),
      objectVersion(
        KEY,
        parseObjects('- objectName: db2\n  secretPath: secret/data/db\n  secretKey: k\n').objects[0] as VaultObject,
        Buffer.from(SECRET),
      ),
      objectVersion(
        KEY,
        parseObjects('- objectName: db\n  secretPath: secret/db\n  secretKey: k\n').objects[0] as VaultObject,
        Buffer.from(SECRET),
      ),
    ];
    expect(new Set([v, ...others]).size).to.equal(others.length + 1);
  });

  it("is the HMAC-SHA-256 of the scheme, the object's configuration as stable JSON, and the contents (nodes and releases must agree)", () => {
    const context =
      'vault-object/1 {"encoding":"utf-8","filePermission":null,"method":"GET","objectName":"db","secretArgs":null,"secretKey":"k","secretPath":"secret/data/db"}';
    const length = Buffer.alloc(4);
    length.writeUInt32BE(Buffer.byteLength(context));
    const expected = createHmac('sha256', KEY).update(length).update(context).update('v').digest('hex');
    expect(expected).to.equal('ba63457614536783bf613cb430a3abffcf411f554e9eca3b41aeb64a1dc800a3');
    expect(objectVersion(KEY, object('  secretKey: k\n'), Buffer.from('v'))).to.equal(expected);
  });
});
