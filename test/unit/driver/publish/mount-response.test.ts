import { expect } from 'chai';
import {
  keepsMountedFiles,
  providerCodeReason,
  validateMountResponse,
} from '../../../../driver/publish/mount-response.js';
import type { MountResponse__Output } from '../../../../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../../../../lib/errors.js';

const file = (path: string, mode = 0, text = 'x') => ({ path, mode, contents: Buffer.from(text) });
const response = (o: Partial<MountResponse__Output> = {}): MountResponse__Output => ({
  object_version: [{ id: 'secret/db', version: 'v1' }],
  error: null,
  files: [file('db', 0, 'pw')],
  ...o,
});

async function failure(r: MountResponse__Output): Promise<SscError> {
  try {
    await validateMountResponse(r, 0o644);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    return err as SscError;
  }
  throw new Error('expected the response to be rejected');
}

describe('validateMountResponse', () => {
  it('returns files and versions; mode 0 means the default mode', async () => {
    const valid = await validateMountResponse(
      response({
        object_version: [
          { id: 'b', version: '2' },
          { id: 'a', version: '' },
        ],
        files: [file('db', 0, 'pw'), file('dir/cert', 0o400, 'C'), file('open', 0o777)],
      }),
      0o640,
    );
    expect(valid.versions).to.deep.equal([
      { id: 'b', version: '2' },
      { id: 'a', version: '' },
    ]);
    expect([...valid.files]).to.deep.equal([
      ['db', { mode: 0o640, contents: Buffer.from('pw') }],
      ['dir/cert', { mode: 0o400, contents: Buffer.from('C') }],
      ['open', { mode: 0o777, contents: Buffer.from('x') }],
    ]);
  });

  it('accepts versions without files (the driver writes only metadata)', async () => {
    expect((await validateMountResponse(response({ files: [] }), 0o644)).files.size).to.equal(0);
  });

  const codes: [string, string, string][] = [
    ['GRPCProviderError', 'GRPCProviderError', '"GRPCProviderError"'],
    ['AccessDenied', 'AccessDenied', '"AccessDenied"'],
    ['vault_sealed_2', 'vault_sealed_2', '"vault_sealed_2"'],
    ['X'.repeat(40), 'X'.repeat(40), `"${'X'.repeat(40)}"`],
    // Not an identifier of at most 40 characters: the code never becomes a label.
    ['X'.repeat(41), 'ProviderError', `"${'X'.repeat(41)}"`],
    ['Not Found!', 'ProviderError', '"Not Found!"'],
    ['password=hunter2', 'ProviderError', '"password=hunter2"'],
    ['2fa', 'ProviderError', '"2fa"'],
    ['???', 'ProviderError', '"???"'],
    ['Denied\n', 'ProviderError', '"Denied\\n"'],
    ['Denied\u001b[31m', 'ProviderError', '"Denied\\u001b[31m"'],
    ['Ünïcode', 'ProviderError', '"Ünïcode"'],
    // Reasons the driver acts on are not for providers to claim.
    ['OperationInProgress', 'ProviderError', '"OperationInProgress"'],
    ['Cancelled', 'ProviderError', '"Cancelled"'],
  ];
  for (const [code, reason, shown] of codes) {
    it(`error code ${JSON.stringify(code)} → failed-precondition, reason ${reason}`, async () => {
      const err = await failure(response({ error: { code } }));
      expect([err.kind, err.reason, err.message]).to.deep.equal([
        'failed-precondition',
        reason,
        `provider reported error code ${shown}`,
      ]);
      expect(providerCodeReason(code)).to.equal(reason);
    });
  }

  it('an error code wins over a response that is otherwise fine', async () => {
    expect((await failure(response({ error: { code: 'X' }, object_version: [] }))).message).to.equal(
      'provider reported error code "X"',
    );
  });

  it('an empty error code is no error', async () => {
    await validateMountResponse(response({ error: { code: '' } }), 0o644);
  });

  it('bounds the message of a huge error code and keeps it out of the reason', async () => {
    const err = await failure(response({ error: { code: 'A'.repeat(500) } }));
    expect(err.reason).to.equal('ProviderError');
    expect(err.message).to.equal(`provider reported error code "${'A'.repeat(64)}…"`);
  });

  it('bounds and escapes a duplicate object id', async () => {
    const id = `a\n${'b'.repeat(100)}`;
    expect(
      (
        await failure(
          response({
            object_version: [
              { id, version: '1' },
              { id, version: '1' },
            ],
          }),
        )
      ).message,
    ).to.equal(`provider returned object "a\\n${'b'.repeat(62)}…" more than once`);
  });

  const invalid: [string, Partial<MountResponse__Output>, string][] = [
    ['no object versions', { object_version: [] }, 'provider returned no object versions'],
    [
      'empty id',
      {
        object_version: [
          { id: 'a', version: '1' },
          { id: '', version: '1' },
        ],
      },
      'provider returned an object version with an empty id',
    ],
    [
      'duplicate id',
      {
        object_version: [
          { id: 'a', version: '1' },
          { id: 'a', version: '2' },
        ],
      },
      'provider returned object "a" more than once',
    ],
    [
      'absolute path',
      { files: [file('/etc/shadow')] },
      'provider returned an invalid file path "/etc/shadow": path is absolute',
    ],
    [
      '.. path',
      { files: [file('a/../../x')] },
      'provider returned an invalid file path "a/../../x": path has a ".." element',
    ],
    ['..data', { files: [file('..data')] }, 'provider returned an invalid file path "..data": path starts with ".."'],
    [
      '.metadata',
      { files: [file('.metadata/a')] },
      'provider returned an invalid file path ".metadata/a": path is inside the reserved .metadata directory',
    ],
    ['duplicate path', { files: [file('a'), file('a')] }, 'provider returned the file path "a" more than once'],
    [
      'file and directory',
      { files: [file('a'), file('a/b')] },
      'provider returned "a" both as a file and as a directory',
    ],
    [
      'mode above 0777',
      { files: [file('a', 0o1000)] },
      'provider returned mode 512 for "a": only permission bits 0000-0777 are allowed',
    ],
    [
      'setuid mode',
      { files: [file('a', 0o4755)] },
      'provider returned mode 2541 for "a": only permission bits 0000-0777 are allowed',
    ],
    [
      'negative mode',
      { files: [file('a', -1)] },
      'provider returned mode -1 for "a": only permission bits 0000-0777 are allowed',
    ],
  ];
  for (const [name, o, message] of invalid) {
    it(`rejects ${name}`, async () => {
      const err = await failure(response(o));
      expect([err.kind, err.reason, err.message]).to.deep.equal([
        'invalid-argument',
        'InvalidProviderResponse',
        message,
      ]);
    });
  }

  it('never echoes file contents', async () => {
    expect((await failure(response({ files: [file('/abs', 0, 'TOPSECRET')] }))).message).to.not.include('TOPSECRET');
  });
});

describe('keepsMountedFiles', () => {
  const v = (id: string, version: string) => ({ id, version });
  const mounted = [v('secret/a', '1'), v('key/b', '2')];
  const cases: [string, number, { id: string; version: string }[], { id: string; version: string }[], boolean][] = [
    ['no files, same versions in another order', 0, [v('key/b', '2'), v('secret/a', '1')], mounted, true],
    ['files present', 1, mounted, mounted, false],
    ['a version differs', 0, [v('secret/a', '1'), v('key/b', '3')], mounted, false],
    ['an object more', 0, [...mounted, v('cert/c', '1')], mounted, false],
    ['an object fewer', 0, [v('secret/a', '1')], mounted, false],
    ['an object renamed', 0, [v('secret/a', '1'), v('key/c', '2')], mounted, false],
    ['nothing mounted (first publish)', 0, mounted, [], false],
  ];
  for (const [name, files, versions, mountedNow, keeps] of cases) {
    it(`${name} → ${keeps ? 'keep the mounted files' : 'write the answer'}`, () => {
      expect(keepsMountedFiles(files, versions, mountedNow)).to.equal(keeps);
    });
  }
});
