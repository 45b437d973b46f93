import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { parseFlags } from '../../../../lib/flags.js';
import { commonProviderFlags } from '../../../../providers/framework/run-provider.js';
import {
  helperNameProblem,
  parameterVariable,
  parseExecParameters,
  type ExecObject,
} from '../../../../providers/exec/parameters.js';
import { execProviderFlags, execSettings } from '../../../../providers/exec/settings.js';

function failure(attributes: Record<string, string>): string {
  try {
    parseExecParameters(attributes);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return (err as SscError).message;
  }
  throw new Error('expected the parameters to be rejected');
}

describe('exec provider parameters', () => {
  it('reads objects with helper, parameters (in order, as strings) and filePermission; tokens are off by default', () => {
    const parsed = parseExecParameters({
      objects:
        '- objectName: db/password\n  helper: bao-kv.sh\n  filePermission: 0440\n  parameters:\n    path: secret/db\n    field: password\n    vaultAddr: http://127.0.0.1:8200\n    retries: 3\n' +
        '- objectName: motd\n  helper: file-get.sh\n  parameters: {path: motd.txt}\n',
    });
    expect(parsed.passServiceAccountTokens).to.equal(false);
    expect(parsed.warnings).to.deep.equal([]);
    expect(parsed.objects).to.deep.equal([
      {
        objectName: 'db/password',
        helper: 'bao-kv.sh',
        filePermission: 0o440,
        parameters: [
          ['path', 'secret/db'],
          ['field', 'password'],
          ['vaultAddr', 'http://127.0.0.1:8200'],
          ['retries', '3'],
        ],
      },
      { objectName: 'motd', helper: 'file-get.sh', filePermission: undefined, parameters: [['path', 'motd.txt']] },
    ] satisfies ExecObject[]);
  });

  const tokens: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['true', true],
    ['false', false],
    ['1', true],
    ['TRUE', true],
  ];
  for (const [value, expected] of tokens) {
    it(`passServiceAccountTokens ${JSON.stringify(value)} → ${expected}`, () => {
      const attributes: Record<string, string> = { objects: '- {objectName: a, helper: h}' };
      if (value !== undefined) attributes['passServiceAccountTokens'] = value;
      expect(parseExecParameters(attributes).passServiceAccountTokens).to.equal(expected);
    });
  }

  it('an unknown field is a warning naming it, not an error', () => {
    expect(parseExecParameters({ objects: '- {objectName: a, helper: h, paramaters: {x: y}}' }).warnings).to.deep.equal(
      ['objects[0] ("a").paramaters is not a field of an exec object; ignored'],
    );
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['no objects', {}, /objects is required/],
    ['objects not a list', { objects: 'objectName: a' }, /objects must be a non-empty YAML list/],
    ['not YAML', { objects: '- [' }, /objects is not valid YAML/],
    ['a duplicate key', { objects: '- {objectName: a, objectName: b, helper: h}' }, /defined twice/],
    ['no objectName', { objects: '- helper: h' }, /objects\[0\]\.objectName is required/],
    [
      'an objectName with ..',
      { objects: '- {objectName: ../x, helper: h}' },
      /objects\[0\] \("\.\.\/x"\)\.objectName is not a file name the volume can hold/,
    ],
    ['an objectName in .metadata', { objects: '- {objectName: .metadata/x, helper: h}' }, /reserved \.metadata/],
    ['no helper', { objects: '- objectName: a' }, /objects\[0\] \("a"\)\.helper is required/],
    [
      'a helper with /',
      { objects: '- {objectName: a, helper: ../bin/sh}' },
      /helper "\.\.\/bin\/sh" must be a file name in --helpers-dir/,
    ],
    ['a helper path', { objects: '- {objectName: a, helper: /bin/sh}' }, /helper "\/bin\/sh" must be a file name/],
    [
      'helper ..',
      { objects: '- {objectName: a, helper: ..}' },
      /helper "\.\." must be a file name, not "\." or "\.\."/,
    ],
    ['helper .', { objects: '- {objectName: a, helper: .}' }, /not "\." or "\.\."/],
    ['a helper with a space', { objects: '- {objectName: a, helper: "a b"}' }, /must be a file name/],
    [
      'a helper name of 65 characters',
      { objects: `- {objectName: a, helper: ${'h'.repeat(65)}}` },
      /must be a file name/,
    ],
    ['a helper that is a map', { objects: '- {objectName: a, helper: {x: 1}}' }, /helper must be a string, not a map/],
    [
      'an objectName listed twice',
      { objects: '- {objectName: a, helper: h}\n- {objectName: a, helper: g}' },
      /objects\[1\]\.objectName "a" is listed twice/,
    ],
    [
      'a parameter name with -',
      { objects: '- {objectName: a, helper: h, parameters: {my-path: x}}' },
      /name "my-path" that is not/,
    ],
    [
      'a parameter name starting with a digit',
      { objects: '- {objectName: a, helper: h, parameters: {1x: x}}' },
      /name "1x" that is not/,
    ],
    [
      'two names, one variable',
      { objects: '- {objectName: a, helper: h, parameters: {vaultAddr: x, VAULT_ADDR: y}}' },
      /"vaultAddr" and "VAULT_ADDR" both become SSC_PARAM_VAULT_ADDR/,
    ],
    [
      'a parameter value that is a list',
      { objects: '- {objectName: a, helper: h, parameters: {x: [1]}}' },
      /parameters\.x must be a string, not a list/,
    ],
    [
      'parameters as a list',
      { objects: '- {objectName: a, helper: h, parameters: [x]}' },
      /parameters must be a map of names to strings, not a list/,
    ],
    [
      'a NUL in a value',
      { objects: '- {objectName: a, helper: h, parameters: {x: "a\\0b"}}' },
      /parameters\.x holds a NUL/,
    ],
    [
      'a huge value',
      { objects: `- {objectName: a, helper: h, parameters: {x: ${'v'.repeat(16 * 1024 + 1)}}}` },
      /parameters\.x is longer than 16384 bytes/,
    ],
    [
      'a bad filePermission',
      { objects: '- {objectName: a, helper: h, filePermission: 01000}' },
      /filePermission must be a file mode/,
    ],
    [
      'a bad passServiceAccountTokens',
      { objects: '- {objectName: a, helper: h}', passServiceAccountTokens: 'yes' },
      /passServiceAccountTokens must be "true" or "false", not "yes"/,
    ],
    [
      '101 objects',
      { objects: Array.from({ length: 101 }, (_, i) => `- {objectName: o${i}, helper: h}`).join('\n') },
      /at most 100/,
    ],
  ];
  for (const [name, attributes, message] of bad)
    it(`refuses ${name}, naming the field`, () => expect(failure(attributes)).to.match(message));

  it('never shows a parameter value in an error', () => {
    expect(failure({ objects: '- {objectName: a, helper: h, parameters: {x: "s3cr3t\\0"}}' })).to.not.include('s3cr3t');
    expect(
      failure({ objects: `- {objectName: a, helper: h, parameters: {x: s3cr3t${'v'.repeat(17000)}}}` }),
    ).to.not.include('s3cr3t');
  });

  const variables: [string, string][] = [
    ['path', 'SSC_PARAM_PATH'],
    ['vaultAddr', 'SSC_PARAM_VAULT_ADDR'],
    ['VAULT_ADDR', 'SSC_PARAM_VAULT_ADDR'],
    ['field', 'SSC_PARAM_FIELD'],
    ['tokenFile', 'SSC_PARAM_TOKEN_FILE'],
    ['x1Y', 'SSC_PARAM_X1_Y'],
    ['_a', 'SSC_PARAM__A'],
    ['aB_c', 'SSC_PARAM_A_B_C'],
  ];
  for (const [name, variable] of variables)
    it(`parameter ${name} → ${variable}`, () => expect(parameterVariable(name)).to.equal(variable));

  const names: [string, boolean][] = [
    ['file-get.sh', true],
    ['bao_kv.v2', true],
    ['.hidden', true],
    ['.', false],
    ['..', false],
    ['a/b', false],
    ['', false],
    ['a\nb', false],
    ['-x', true],
  ];
  for (const [name, ok] of names)
    it(`helper name ${JSON.stringify(name)} is ${ok ? 'accepted' : 'refused'}`, () =>
      expect(helperNameProblem(name) === undefined).to.equal(ok));
});

describe('exec provider settings', () => {
  const specs = { ...commonProviderFlags('exec'), ...execProviderFlags };
  const parse = (argv: string[]) => execSettings(parseFlags(argv, specs));

  it('defaults: 10s, 1 MiB, 8 helpers, no key file', () => {
    expect(parse(['--helpers-dir=/h'])).to.deep.equal({
      helpersDir: '/h',
      helperTimeoutMs: 10_000,
      maxOutputBytes: 1_048_576,
      maxConcurrentHelpers: 8,
      hmacKeyFile: '',
    });
  });

  it('reads every flag', () => {
    expect(
      parse([
        '--helpers-dir=/h',
        '--helper-timeout=1m30s',
        '--max-output-bytes=4096',
        '--max-concurrent-helpers=2',
        '--hmac-key-file=/k',
      ]),
    ).to.deep.equal({
      helpersDir: '/h',
      helperTimeoutMs: 90_000,
      maxOutputBytes: 4096,
      maxConcurrentHelpers: 2,
      hmacKeyFile: '/k',
    });
  });

  const bad: [string, string[], RegExp][] = [
    ['no --helpers-dir', [], /--helpers-dir is required/],
    ['a timeout without a unit', ['--helpers-dir=/h', '--helper-timeout=10'], /--helper-timeout/],
    ['a timeout of 50ms', ['--helpers-dir=/h', '--helper-timeout=50ms'], /between 100ms and 10m/],
    ['a timeout of 11m', ['--helpers-dir=/h', '--helper-timeout=11m'], /between 100ms and 10m/],
    [
      '0 output bytes',
      ['--helpers-dir=/h', '--max-output-bytes=0'],
      /--max-output-bytes must be a whole number from 1/,
    ],
    ['1 MiB written as 1Mi', ['--helpers-dir=/h', '--max-output-bytes=1Mi'], /--max-output-bytes/],
    [
      '0 helpers',
      ['--helpers-dir=/h', '--max-concurrent-helpers=0'],
      /--max-concurrent-helpers must be a whole number from 1 to 1024/,
    ],
  ];
  for (const [name, argv, message] of bad) it(`refuses ${name}`, () => expect(() => parse(argv)).to.throw(message));
});
