import { status as GrpcStatus } from '@grpc/grpc-js';
import { expect } from 'chai';
import { grpcCodeOf, SscError } from '../../../../lib/errors.js';
import { mapEntries, parseYamlParameter } from '../../../../providers/framework/go-yaml.js';
import {
  fieldName,
  goBoolParameter,
  goStringField,
  invalidParameterOf,
} from '../../../../providers/framework/parameter-errors.js';

const invalid = invalidParameterOf('test');

/** The YAML node of `v: <yaml>` as a provider gets it from mapEntries; `undefined` when the field is absent. */
function fieldNode(yaml: string | undefined): unknown {
  if (yaml === undefined) return undefined;
  const doc = parseYamlParameter(`v: ${yaml}`, 'test');
  return mapEntries(doc.contents, doc)?.[0]?.[1];
}

/** The message `run` throws, checked to be the provider's INVALID_ARGUMENT InvalidParameters. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return (err as SscError).message;
  }
  throw new Error('expected a refusal');
}

describe('invalidParameterOf', () => {
  const cases: [provider: string, message: string, expected: string][] = [
    ['vault', 'roleName is required', 'vault provider: roleName is required'],
    [
      'azure',
      'objects lists no object (objects.array is empty)',
      'azure provider: objects lists no object (objects.array is empty)',
    ],
    ['exec', 'helper "../x" must be a file name', 'exec provider: helper "../x" must be a file name'],
    ['pki', 'usages is empty', 'pki provider: usages is empty'],
    ['file', 'parameter "objects" is required', 'file provider: parameter "objects" is required'],
  ];
  for (const [provider, message, expected] of cases) {
    it(`${provider}: INVALID_ARGUMENT InvalidParameters, ${JSON.stringify(expected)}`, () => {
      const err = invalidParameterOf(provider)(message);
      expect([grpcCodeOf(err.kind), err.reason, err.message]).to.deep.equal([
        GrpcStatus.INVALID_ARGUMENT,
        'InvalidParameters',
        expected,
      ]);
    });
  }

  it('makes a new error each time (a thrown error is never shared between Mounts)', () =>
    expect(invalid('a')).to.not.equal(invalid('a')));
});

describe('fieldName', () => {
  const cases: [list: string, index: number, objectName: string | undefined, field: string, expected: string][] = [
    ['objects', 1, 'db-pass', 'secretKey', 'objects[1] ("db-pass").secretKey'],
    ['objects', 0, undefined, 'objectName', 'objects[0].objectName'],
    ['objects.array', 3, 'cert', 'objectType', 'objects.array[3] ("cert").objectType'],
    ['objects', 0, 'a"b\n', 'helper', 'objects[0] ("a\\"b\\n").helper'],
    ['objects', 0, 'x'.repeat(100), 'f', `objects[0] ("${'x'.repeat(64)}…").f`],
  ];
  for (const [list, index, objectName, field, expected] of cases) {
    it(expected, () => expect(fieldName(list, index, objectName, field)).to.equal(expected));
  }
});

describe('goStringField', () => {
  const read: [yaml: string | undefined, expected: string][] = [
    ['db', 'db'],
    ['0600', '0600'],
    ['true', 'true'],
    ['"quoted"', 'quoted'],
    ['1.50', '1.50'],
    ['" padded "', ' padded '],
    ['""', ''],
    ['~', ''],
    ['null', ''],
    [undefined, ''],
  ];
  for (const [yaml, expected] of read) {
    it(`reads ${yaml ?? 'an absent field'} as yaml.v3 fills a Go string: ${JSON.stringify(expected)}`, () =>
      expect(goStringField(fieldNode(yaml), 'objects[0].x', invalid)).to.equal(expected));
  }
  const refused: [yaml: string, message: string][] = [
    ['{a: 1}', 'test provider: objects[0].x must be a string, not a map'],
    ['[a]', 'test provider: objects[0].x must be a string, not a list'],
  ];
  for (const [yaml, message] of refused) {
    it(`refuses ${yaml}`, () =>
      expect(refusal(() => goStringField(fieldNode(yaml), 'objects[0].x', invalid))).to.equal(message));
  }
});

describe('goBoolParameter', () => {
  const read: [text: string, expected: boolean][] = [
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['t', true],
    ['1', true],
    ['false', false],
    ['F', false],
    ['0', false],
  ];
  for (const [text, expected] of read) {
    it(`reads ${JSON.stringify(text)} as Go's strconv.ParseBool: ${expected}`, () =>
      expect(goBoolParameter(text, 'flag', invalid)).to.equal(expected));
  }
  const refused: [text: string, message: string][] = [
    ['yes', 'test provider: flag must be "true" or "false", not "yes"'],
    [' true', 'test provider: flag must be "true" or "false", not " true"'],
    ['', 'test provider: flag must be "true" or "false", not ""'],
    ['x'.repeat(40), `test provider: flag must be "true" or "false", not "${'x'.repeat(16)}…"`],
  ];
  for (const [text, message] of refused) {
    it(`refuses ${JSON.stringify(text.slice(0, 20))}`, () =>
      expect(refusal(() => goBoolParameter(text, 'flag', invalid))).to.equal(message));
  }
});
