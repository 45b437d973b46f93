import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { goInteger } from '../../../../providers/framework/go-yaml.js';
import { parseObjects, type VaultObject } from '../../../../providers/vault/objects.js';
import { parseSecretPath } from '../../../../providers/vault/secret-path.js';

function only(yaml: string): VaultObject {
  const { objects } = parseObjects(yaml);
  expect(objects).to.have.length(1);
  return objects[0] as VaultObject;
}

function failure(objects: string | undefined): string {
  try {
    parseObjects(objects);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return (err as SscError).message;
  }
  throw new Error('expected the objects to be rejected');
}

describe('vault parseObjects', () => {
  it("reads HashiCorp's documented example (database credentials) with the defaults filled in", () => {
    const { objects, warnings } = parseObjects(
      '- objectName: "dbUsername"\n  secretPath: "database/creds/db-app"\n  secretKey: "username"\n' +
        '- objectName: "dbPassword"\n  secretPath: "database/creds/db-app"\n  secretKey: "password"\n',
    );
    expect(warnings).to.deep.equal([]);
    expect(objects[0]).to.deep.equal({
      objectName: 'dbUsername',
      secretPath: 'database/creds/db-app',
      path: 'database/creds/db-app',
      version: undefined,
      query: [],
      secretKey: 'username',
      method: 'GET',
      secretArgs: undefined,
      filePermission: undefined,
      encoding: 'utf-8',
    });
    expect(objects[1]?.objectName).to.equal('dbPassword');
  });

  it("reads a PKI issue with method, secretArgs and filePermission (HashiCorp's test fixture)", () => {
    const o = only(
      '- objectName: "test-certs"\n  secretPath: "pki/issue/example-dot-com"\n  secretArgs:\n    common_name: "test.example.com"\n' +
        '    ip_sans: "127.0.0.1"\n    exclude_cn_from_sans: true\n    ttl: 24h\n  method: "PUT"\n  filePermission: 0600\n',
    );
    expect(o.method).to.equal('PUT');
    expect(o.filePermission).to.equal(0o600);
    expect(o.secretArgs).to.deep.equal({
      common_name: 'test.example.com',
      ip_sans: '127.0.0.1',
      exclude_cn_from_sans: true,
      ttl: '24h',
    });
  });

  it("reads the leading-dash style of HashiCorp's config test", () => {
    expect(only('-\n  secretPath: "v1/secret/foo1"\n  objectName: "bar1"\n  filePermission: 0600')).to.include({
      objectName: 'bar1',
      path: 'secret/foo1',
      filePermission: 0o600,
    });
  });

  // yaml.v3 fills a Go string with any scalar's text as written.
  const strings: [string, string][] = [
    ['0600', '0600'],
    ['true', 'true'],
    ['yes', 'yes'],
    ['1.50', '1.50'],
    ['"quoted: x"', 'quoted: x'],
    ['0x1F', '0x1F'],
  ];
  for (const [yaml, text] of strings) {
    it(`secretKey: ${yaml} is the string ${JSON.stringify(text)}, as yaml.v3 reads it`, () => {
      expect(only(`- objectName: a\n  secretPath: s/a\n  secretKey: ${yaml}\n`).secretKey).to.equal(text);
    });
  }

  // filePermission: an integer as yaml.v3 resolves it (Go's ParseInt base 0); 0 means "the Mount's permission".
  const modes: [string, number | undefined][] = [
    ['0600', 0o600],
    ['0o600', 0o600],
    ['0O644', 0o644],
    ['420', 0o644],
    ['0x1a4', 0o644],
    ['0b110100100', 0o644],
    ['0_600', 0o600],
    ['384.0', 0o600],
    ['"0600"', 0o600],
    ["'420'", 0o644],
    ['0777', 0o777],
    ['0', undefined],
    ['000', undefined],
    ['~', undefined],
    ['null', undefined],
    ['""', undefined],
  ];
  for (const [yaml, mode] of modes) {
    it(`filePermission: ${yaml} → ${mode === undefined ? "the Mount's permission" : `0${mode.toString(8)}`}`, () => {
      expect(only(`- objectName: a\n  secretPath: s/a\n  filePermission: ${yaml}\n`).filePermission).to.equal(mode);
    });
  }

  const methods: [string, string][] = [
    ['GET', 'GET'],
    ['get', 'GET'],
    ['Put', 'PUT'],
    ['POST', 'POST'],
    ['""', 'GET'],
    ['~', 'GET'],
  ];
  for (const [yaml, method] of methods) {
    it(`method: ${yaml} → ${method}`, () =>
      expect(only(`- objectName: a\n  secretPath: s/a\n  method: ${yaml}\n`).method).to.equal(method));
  }

  const encodings: [string, string][] = [
    ['utf-8', 'utf-8'],
    ['UTF-8', 'utf-8'],
    ['base64', 'base64'],
    ['Base64', 'base64'],
    ['HEX', 'hex'],
  ];
  for (const [yaml, encoding] of encodings) {
    it(`encoding: ${yaml} → ${encoding}`, () =>
      expect(only(`- objectName: a\n  secretPath: s/a\n  secretKey: k\n  encoding: ${yaml}\n`).encoding).to.equal(
        encoding,
      ));
  }

  it('reads secretArgs scalars as yaml.v3 does into interface{} (0600 octal, yes a string, 1_000 an integer)', () => {
    const o = only(
      '- objectName: a\n  secretPath: pki/issue/r\n  method: POST\n  secretArgs:\n    a: 0600\n    b: yes\n    c: 1_000\n    d: "0600"\n' +
        '    e: 1.5\n    f: ~\n    g: [1, x]\n    h: {i: false}\n    j: TRUE\n',
    );
    expect(o.secretArgs).to.deep.equal({
      a: 384,
      b: 'yes',
      c: 1000,
      d: '0600',
      e: 1.5,
      f: null,
      g: [1, 'x'],
      h: { i: false },
      j: true,
    });
  });

  it('takes objectName paths in subdirectories', () => {
    expect(only('- objectName: tls/tls.crt\n  secretPath: s/a').objectName).to.equal('tls/tls.crt');
  });

  it('warns about fields it does not know (a typo would otherwise mount the whole secret)', () => {
    const { warnings } = parseObjects('- objectName: a\n  secretPath: s/a\n  secretkey: password\n');
    expect(warnings).to.deep.equal(['objects[0] ("a").secretkey is not a field of a Vault object; ignored']);
  });

  it('warns that encoding has no effect without secretKey', () => {
    expect(parseObjects('- objectName: a\n  secretPath: s/a\n  encoding: base64\n').warnings).to.deep.equal([
      'objects[0] ("a").encoding has no effect without secretKey: the file is the whole data as JSON',
    ]);
  });

  const invalid: [string, string | undefined, string][] = [
    ['missing objects', undefined, 'vault provider: objects is required: a YAML list of objectName/secretPath entries'],
    ['blank objects', ' \n', 'vault provider: objects is required: a YAML list of objectName/secretPath entries'],
    ['a map', 'objectName: a', 'vault provider: objects must be a non-empty YAML list'],
    ['an empty list', '[]', 'vault provider: objects must be a non-empty YAML list'],
    ['an entry that is a scalar', '- a', 'vault provider: objects[0] must be a map, not a scalar'],
    ['an entry that is null', '- ~', 'vault provider: objects[0] must be a map, not null'],
    ['no objectName', '- secretPath: s/a', 'vault provider: objects[0].objectName is required'],
    ['an empty objectName', '- objectName: ""\n  secretPath: s/a', 'vault provider: objects[0].objectName is required'],
    [
      'an objectName that is a map',
      '- objectName: {a: 1}\n  secretPath: s/a',
      'vault provider: objects[0].objectName must be a string, not a map',
    ],
    [
      'an objectName with ..',
      '- objectName: ../escape\n  secretPath: s/a',
      'vault provider: objects[0] ("../escape").objectName is not a file name the volume can hold: path starts with ".."',
    ],
    [
      'an absolute objectName',
      '- objectName: /etc/passwd\n  secretPath: s/a',
      'vault provider: objects[0] ("/etc/passwd").objectName is not a file name the volume can hold: path is absolute',
    ],
    [
      'an objectName in .metadata',
      '- objectName: .metadata/x\n  secretPath: s/a',
      'vault provider: objects[0] (".metadata/x").objectName is not a file name the volume can hold: path is inside the reserved .metadata directory',
    ],
    [
      'an objectName listed twice',
      '- objectName: a\n  secretPath: s/a\n- objectName: b\n  secretPath: s/b\n- objectName: a\n  secretPath: s/c',
      'vault provider: objects[2].objectName "a" is listed twice; each objectName must be unique',
    ],
    ['no secretPath', '- objectName: a', 'vault provider: objects[0] ("a").secretPath is required'],
    [
      'a secretPath with ..',
      '- objectName: a\n  secretPath: secret/../sys/seal',
      'vault provider: objects[0] ("a").secretPath "secret/../sys/seal" has an empty, "." or ".." segment',
    ],
    [
      'a bad version',
      '- objectName: a\n  secretPath: secret/a?version=latest',
      'vault provider: objects[0] ("a").secretPath "secret/a?version=latest" has a version that is not a non-negative integer',
    ],
    [
      'method DELETE',
      '- objectName: a\n  secretPath: s/a\n  method: DELETE',
      'vault provider: objects[0] ("a").method must be GET, PUT or POST, not "DELETE"',
    ],
    [
      'encoding utf8',
      '- objectName: a\n  secretPath: s/a\n  encoding: utf8',
      'vault provider: objects[0] ("a").encoding must be utf-8, base64 or hex, not "utf8"',
    ],
    [
      'secretArgs a list',
      '- objectName: a\n  secretPath: s/a\n  secretArgs: [a]',
      'vault provider: objects[0] ("a").secretArgs must be a map, not a list',
    ],
    [
      'secretKey a list',
      '- objectName: a\n  secretPath: s/a\n  secretKey: [a]',
      'vault provider: objects[0] ("a").secretKey must be a string, not a list',
    ],
  ];
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => `- {objectName: o${i}, secretPath: s/o${i}}`).join('\n');
  invalid.push([
    'more than 1000 objects',
    many(1001),
    'vault provider: objects lists 1001 entries; at most 1000 are allowed per class',
  ]);
  it('accepts 1000 objects, the most a class may list', () =>
    expect(parseObjects(many(1000)).objects).to.have.length(1000));
  for (const [name, objects, message] of invalid) {
    it(`rejects ${name}`, () => expect(failure(objects)).to.equal(message));
  }

  const badModes = ['0999', '01777', '512', '-1', '1.5', 'rw-r--r--', 'true', '"0o1000"', '[384]'];
  for (const yaml of badModes) {
    it(`rejects filePermission: ${yaml}`, () => {
      expect(failure(`- objectName: a\n  secretPath: s/a\n  filePermission: ${yaml}`)).to.equal(
        'vault provider: objects[0] ("a").filePermission must be a file mode from 0 to 0777, such as 0600 (octal) or 384',
      );
    });
  }

  it('bounds secretArgs expanded through aliases (a "billion laughs" class), across all entries', () => {
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      laughs.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    const bomb = `- objectName: a\n  secretPath: s/a\n  method: PUT\n  secretArgs:\n${laughs.map((l) => `    ${l}`).join('\n')}\n`;
    expect(failure(bomb)).to.match(
      /^vault provider: objects\[0\] \("a"\)\.secretArgs\.[a-i](\[\d+\])* holds more than 10000 values \(aliases expanded\)$/,
    );
    const wide = Array.from(
      { length: 3 },
      (_, i) =>
        `- objectName: o${i}\n  secretPath: s/a\n  method: PUT\n  secretArgs: ${i === 0 ? '&big ' : '*big'}${i === 0 ? `{${Array.from({ length: 4000 }, (_, k) => `k${k}: ${k}`).join(', ')}}` : ''}`,
    ).join('\n');
    expect(failure(wide)).to.match(
      /^vault provider: objects\[2\] \("o2"\)\.secretArgs\.k\d+ holds more than 10000 values/,
    );
  });

  it("rejects invalid YAML with the parser's first line, and a key given twice (yaml.v3 refuses it too)", () => {
    expect(failure('- objectName: [a\n')).to.match(/^vault provider: objects is not valid YAML: \S[^\n]*$/);
    expect(failure('- objectName: a\n  objectName: b\n  secretPath: s')).to.match(
      /^vault provider: objects is not valid YAML: /,
    );
  });
});

describe('vault parseSecretPath', () => {
  const valid: [string, string, number | undefined, [string, string][]][] = [
    ['secret/data/db', 'secret/data/db', undefined, []],
    ['v1/secret/foo1', 'secret/foo1', undefined, []],
    ['/v1/secret/foo1', 'secret/foo1', undefined, []],
    ['/secret/foo1', 'secret/foo1', undefined, []],
    ['secret/data/db?version=3', 'secret/data/db', 3, []],
    ['secret/data/db?version=0', 'secret/data/db', 0, []],
    [
      'pki/issue/r?a=1&b=x%20y&c=d+e',
      'pki/issue/r',
      undefined,
      [
        ['a', '1'],
        ['b', 'x y'],
        ['c', 'd e'],
      ],
    ],
    ['secret/db?', 'secret/db', undefined, []],
    ['v1', 'v1', undefined, []],
  ];
  for (const [input, path, version, query] of valid) {
    it(`${input} → ${path}${version === undefined ? '' : ` version ${version}`}`, () =>
      expect(parseSecretPath(input)).to.deep.equal({ path, version, query }));
  }

  const invalid: [string, string][] = [
    ['', 'names no path'],
    ['/v1/', 'names no path'],
    ['?version=1', 'names no path'],
    ['secret//db', 'has an empty, "." or ".." segment'],
    ['secret/db/', 'has an empty, "." or ".." segment'],
    ['secret/./db', 'has an empty, "." or ".." segment'],
    ['secret/db#x', 'has a control character or "#"'],
    ['secret/d\nb', 'has a control character or "#"'],
    ['secret/db?version=-1', 'has a version that is not a non-negative integer'],
    ['secret/db?version=', 'has a version that is not a non-negative integer'],
    ['secret/db?version=1&version=2', 'has more than one version'],
    ['secret/db?a=%zz', 'has a bad "%" escape in its query'],
    ['secret/db?a=1;b=2', 'has a ";" in its query'],
  ];
  for (const [input, problem] of invalid) {
    it(`rejects ${JSON.stringify(input)}: ${problem}`, () => expect(parseSecretPath(input)).to.deep.equal({ problem }));
  }
});

describe('goInteger (Go strconv.ParseInt base 0 after yaml.v3 drops underscores)', () => {
  const table: [string, number | undefined][] = [
    ['0', 0],
    ['0600', 384],
    ['0o600', 384],
    ['0x1A4', 420],
    ['0b11', 3],
    ['-0600', -384],
    ['+42', 42],
    ['1_000', 1000],
    ['08', 8],
    ['1e2', 100],
    ['1.5', undefined],
    ['abc', undefined],
    ['', undefined],
    ['0x', undefined],
  ];
  for (const [text, value] of table)
    it(`${JSON.stringify(text)} → ${value}`, () => expect(goInteger(text)).to.equal(value));
});
