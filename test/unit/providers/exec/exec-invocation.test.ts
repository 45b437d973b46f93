import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { EXIT_NO_VERSION_SUPPORT, exitMeaning } from '../../../../providers/exec/exec-errors.js';
import { contentFrom, outcomeError, versionFrom, type CallContext } from '../../../../providers/exec/helper-outcome.js';
import type { HelperOutcome } from '../../../../providers/exec/helper-runner.js';
import { REDACTED, stderrSummary } from '../../../../providers/exec/helper-stderr.js';
import {
  helperArguments,
  helperEnvironment,
  podIdentity,
  secretValues,
  tokensToPass,
} from '../../../../providers/exec/invocation.js';
import type { ExecObject } from '../../../../providers/exec/parameters.js';
import { digestVersion } from '../../../../providers/exec/exec-provider.js';

const OBJECT: ExecObject = {
  objectName: 'db/password',
  helper: 'bao-kv.sh',
  filePermission: undefined,
  parameters: [
    ['path', 'secret/db'],
    ['vaultToken', 's.hunter2'],
  ],
};
const POD = {
  'csi.storage.k8s.io/pod.namespace': 'team-a',
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/serviceAccount.name': 'web',
};
const TOKENS = JSON.stringify({ vault: { token: 'eyJ.tok.en', expirationTimestamp: '2030-01-01T00:00:00Z' } });

function thrown(fn: () => unknown): SscError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    return err as SscError;
  }
  throw new Error('expected an SscError');
}

describe('exec provider invocation: argv', () => {
  const hostile = ['a;b', '$(touch /tmp/x)', 'line1\nline2', '-rf', '--help', '`id`', '\'"', ' spaced '];
  for (const value of hostile) {
    it(`pod name ${JSON.stringify(value)} is one argv entry, unchanged`, () => {
      const pod = podIdentity({
        ...POD,
        'csi.storage.k8s.io/pod.name': value,
        'csi.storage.k8s.io/pod.namespace': value,
      });
      expect(helperArguments('get', OBJECT, pod)).to.deep.equal(['get', 'db/password', value, value, 'web']);
    });
  }

  it('version has the same arguments after its subcommand', () => {
    expect(helperArguments('version', OBJECT, podIdentity(POD))).to.deep.equal([
      'version',
      'db/password',
      'team-a',
      'web-0',
      'web',
    ]);
  });

  for (const attribute of Object.keys(POD)) {
    it(`a Mount without ${attribute} is FAILED_PRECONDITION PodInfoMissing naming it`, () => {
      const e = thrown(() => podIdentity({ ...POD, [attribute]: '' }));
      expect([e.kind, e.reason]).to.deep.equal(['failed-precondition', 'PodInfoMissing']);
      expect(e.message).to.include(attribute).and.include('podInfoOnMount');
    });
  }

  it('a NUL in a pod attribute is INVALID_ARGUMENT (argv cannot carry it)', () => {
    expect(thrown(() => podIdentity({ ...POD, 'csi.storage.k8s.io/pod.name': 'a\0b' })).reason).to.equal(
      'InvalidMountRequest',
    );
  });
});

describe('exec provider invocation: environment', () => {
  it('is only PATH, HOME, LANG and the parameters without tokens', () => {
    expect(helperEnvironment(OBJECT, undefined)).to.deep.equal({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/nonexistent',
      LANG: 'C.UTF-8',
      SSC_PARAM_PATH: 'secret/db',
      SSC_PARAM_VAULT_TOKEN: 's.hunter2',
    });
  });

  it('a parameter named path cannot replace PATH; tokens are added only when given', () => {
    const env = helperEnvironment({ ...OBJECT, parameters: [['PATH', '/evil']] }, TOKENS);
    expect(env['PATH']).to.equal('/usr/local/bin:/usr/bin:/bin');
    expect(env['SSC_PARAM_PATH']).to.equal('/evil');
    expect(env['SSC_SERVICE_ACCOUNT_TOKENS']).to.equal(TOKENS);
  });

  const tokenCases: [string, Record<string, string>, boolean, string | undefined | RegExp][] = [
    [
      'not opted in: none, even when the driver sent them',
      { 'csi.storage.k8s.io/serviceAccount.tokens': TOKENS },
      false,
      undefined,
    ],
    ['opted in: the JSON as the driver sent it', { 'csi.storage.k8s.io/serviceAccount.tokens': TOKENS }, true, TOKENS],
    ['opted in without tokens: ServiceAccountTokenMissing', {}, true, /ServiceAccountTokenMissing/],
  ];
  for (const [name, attributes, optedIn, expected] of tokenCases) {
    it(`tokens ${name}`, () => {
      if (expected instanceof RegExp) expect(thrown(() => tokensToPass(attributes, optedIn)).reason).to.match(expected);
      else expect(tokensToPass(attributes, optedIn)).to.equal(expected);
    });
  }
});

describe("exec provider: what a helper's stderr may show", () => {
  const secrets = secretValues(OBJECT, { password: 'p@ss', empty: '' }, TOKENS);

  it('secret values: parameters, nodePublishSecretRef values, the tokens JSON and each token, longest first, never ""', () => {
    expect([...secrets].sort()).to.deep.equal(['eyJ.tok.en', 'p@ss', 's.hunter2', 'secret/db', TOKENS].sort());
    expect(secrets[0]).to.equal(TOKENS);
  });

  const cases: [string, string, string][] = [
    ['a token on the first line', 'login failed for eyJ.tok.en\nmore', `login failed for ${REDACTED}`],
    ['a parameter and a Secret value', 'error: s.hunter2 / p@ss rejected', `error: ${REDACTED} / ${REDACTED} rejected`],
    ['only the first non-empty line', '\n\n  first  \nsecond', 'first'],
    ['control characters escaped', 'bad \u001b[31mred\u0007 thing\ttab', 'bad \\u001b[31mred\\u0007 thing\\ttab'],
    ['a carriage return ends the line only before \\n', 'a\rb\r\nc', 'a\\rb'],
    ['nothing', '', ''],
  ];
  for (const [name, stderr, shown] of cases)
    it(`${name}`, () => expect(stderrSummary(Buffer.from(stderr), secrets)).to.equal(shown));

  it('at most 200 characters, and a secret crossing the cut is hidden whole', () => {
    const shown = stderrSummary(Buffer.from(`${'x'.repeat(195)}s.hunter2${'y'.repeat(100)}`), secrets);
    expect(shown).to.equal(`${'x'.repeat(195)}[reda…`);
    expect(shown).to.not.include('s.h');
  });

  it('a secret that holds a newline is hidden before the text is cut into lines', () => {
    expect(stderrSummary(Buffer.from('token is abc\ndef here'), ['abc\ndef'])).to.equal(`token is ${REDACTED} here`);
  });
});

describe('exec provider: helper outcomes', () => {
  const get: CallContext = {
    operation: 'get',
    objectName: 'db',
    helper: 'h.sh',
    timeoutMs: 1000,
    maxOutputBytes: 10,
    secrets: ['hunter2'],
  };
  const version: CallContext = { ...get, operation: 'version' };
  const exited = (code: number | null, stdout = '', stderr = '', signal: string | null = null): HelperOutcome => ({
    kind: 'exited',
    code,
    signal,
    stdout: Buffer.from(stdout),
    stderr: Buffer.from(stderr),
  });

  const errors: [string, HelperOutcome, CallContext, string, string, RegExp][] = [
    [
      'exit 1',
      exited(1, '', 'denied: hunter2'),
      get,
      'failed-precondition',
      'HelperFailed',
      /^exec provider: helper "h\.sh" get "db" exited with 1: denied: \[redacted\]$/,
    ],
    [
      'exit 66',
      exited(66, '', 'no such secret'),
      get,
      'not-found',
      'HelperObjectNotFound',
      /exited with 66: no such secret$/,
    ],
    ['exit 75', exited(75), get, 'unavailable', 'HelperTemporaryFailure', /exited with 75 \(no stderr\)$/],
    [
      'exit 77',
      exited(77, '', 'forbidden'),
      get,
      'permission-denied',
      'HelperPermissionDenied',
      /exited with 77: forbidden$/,
    ],
    ['a signal', exited(null, '', '', 'SIGSEGV'), get, 'failed-precondition', 'HelperFailed', /was killed by SIGSEGV/],
    ['exit 3 of get', exited(3), get, 'failed-precondition', 'HelperFailed', /exited with 3/],
    [
      'a timeout',
      { kind: 'timeout', stderr: Buffer.from('stuck on hunter2') },
      get,
      'deadline-exceeded',
      'HelperTimeout',
      /ran longer than 1000 ms and was killed: stuck on \[redacted\]$/,
    ],
    [
      'a flood',
      { kind: 'too-large', stderr: Buffer.alloc(0) },
      get,
      'resource-exhausted',
      'HelperOutputTooLarge',
      /printed more than 10 bytes \(--max-output-bytes\)/,
    ],
    [
      'a cancelled Mount',
      { kind: 'cancelled', stderr: Buffer.alloc(0) },
      get,
      'deadline-exceeded',
      'HelperTimeout',
      /the Mount ended/,
    ],
    [
      'no start',
      { kind: 'start-failed', errno: 'ENOEXEC' },
      get,
      'failed-precondition',
      'HelperStartFailed',
      /could not start \(ENOEXEC\)/,
    ],
    [
      'version exit 2',
      exited(2),
      version,
      'failed-precondition',
      'HelperFailed',
      /helper "h\.sh" version "db" exited with 2/,
    ],
  ];
  for (const [name, outcome, context, kind, reason, message] of errors) {
    it(`${name}: ${kind} ${reason}`, () => {
      const e = outcomeError(outcome, context);
      expect([e?.kind, e?.reason]).to.deep.equal([kind, reason]);
      expect(e?.message).to.match(message);
    });
  }

  it('exit 0 is no error; get hands back stdout byte for byte', () => {
    expect(outcomeError(exited(0), get)).to.equal(undefined);
    const bytes = Buffer.from([0, 255, 10, 13]);
    expect(
      contentFrom({ kind: 'exited', code: 0, signal: null, stdout: bytes, stderr: Buffer.alloc(0) }, get),
    ).to.deep.equal(bytes);
  });

  const versions: [string, HelperOutcome, string | undefined | RegExp][] = [
    ['one line', exited(0, 'v42\n'), 'v42'],
    ['without a newline', exited(0, '7'), '7'],
    ['CRLF', exited(0, 'v1\r\n'), 'v1'],
    ['128 characters', exited(0, 'a'.repeat(128)), 'a'.repeat(128)],
    ['exit 3: no version support', exited(EXIT_NO_VERSION_SUPPORT, 'ignored'), undefined],
    ['empty', exited(0, ''), /HelperBadVersion/],
    ['two lines', exited(0, 'a\nb\n'), /HelperBadVersion/],
    ['129 characters', exited(0, 'a'.repeat(129)), /HelperBadVersion/],
    ['a control character', exited(0, 'a\u0001'), /HelperBadVersion/],
    ['non-ASCII', exited(0, 'vé'), /HelperBadVersion/],
    ['a trailing space', exited(0, 'v1 '), /HelperBadVersion/],
  ];
  for (const [name, outcome, expected] of versions) {
    it(`version ${name}`, () => {
      if (expected instanceof RegExp) {
        const e = thrown(() => versionFrom(outcome, version));
        expect(e.reason).to.match(expected);
        expect(e.kind).to.equal('failed-precondition');
        expect(e.message).to.not.include('aaaa');
      } else expect(versionFrom(outcome, version)).to.equal(expected);
    });
  }

  it('exit codes: 66, 75, 77 have their own meaning, everything else is HelperFailed', () => {
    expect(
      [0, 1, 2, 3, 64, 65, 66, 74, 75, 76, 77, 78, 126, 127, 255, null].map((c) => exitMeaning(c).reason),
    ).to.deep.equal([
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
      'HelperObjectNotFound',
      'HelperFailed',
      'HelperTemporaryFailure',
      'HelperFailed',
      'HelperPermissionDenied',
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
      'HelperFailed',
    ]);
  });
});

describe('exec provider: digest versions', () => {
  it('a digest version depends on the key, the helper, the object and the content, and shows none of them', () => {
    const key = Buffer.alloc(32, 1);
    const v = digestVersion(key, OBJECT, Buffer.from('hunter2'));
    expect(v).to.match(/^[0-9a-f]{64}$/);
    expect(digestVersion(key, OBJECT, Buffer.from('hunter2'))).to.equal(v);
    expect(digestVersion(Buffer.alloc(32, 2), OBJECT, Buffer.from('hunter2'))).to.not.equal(v);
    expect(digestVersion(key, { ...OBJECT, helper: 'other' }, Buffer.from('hunter2'))).to.not.equal(v);
    expect(digestVersion(key, { ...OBJECT, objectName: 'other' }, Buffer.from('hunter2'))).to.not.equal(v);
    expect(digestVersion(key, OBJECT, Buffer.from('hunter3'))).to.not.equal(v);
  });
});
