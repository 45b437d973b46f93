import { expect } from 'chai';
import { parseSecretsFile, parseTimeoutFlag } from '../../../bin/kubelet-commands.js';
import {
  DriverUnreachableError,
  SOCKET_POLL_MS,
  waitForSocket,
  type SocketWaitPorts,
} from '../../../bin/wait-for-socket.js';

/** Fake ports: connect results in order (the last repeats), a clock that sleeps advance. */
function fakePorts(
  results: readonly (string | undefined)[],
): SocketWaitPorts & { waited: string[]; attempts: number; clock: number } {
  const ports = {
    waited: [] as string[],
    attempts: 0,
    clock: 1_000_000,
    async tryConnect() {
      return results[Math.min(ports.attempts++, results.length - 1)];
    },
    now: () => ports.clock,
    async sleep(ms: number) {
      ports.clock += ms;
    },
    onWaiting(message: string) {
      ports.waited.push(message);
    },
  };
  return ports;
}

describe('waitForSocket (publish/unpublish wait for the driver)', () => {
  const cases: {
    name: string;
    results: (string | undefined)[];
    timeoutMs: number;
    attempts: number;
    waited: string[];
    error?: RegExp;
  }[] = [
    {
      name: 'a driver already listening: no wait, no message',
      results: [undefined],
      timeoutMs: 30_000,
      attempts: 1,
      waited: [],
    },
    {
      name: 'a driver still starting (ENOENT, then listening): says so once, then connects',
      results: ['ENOENT', 'ENOENT', 'ENOENT', undefined],
      timeoutMs: 30_000,
      attempts: 4,
      waited: ['waiting up to 30s for a driver at unix:///run/csi.sock (connect ENOENT)'],
    },
    {
      name: 'a stale socket file (ECONNREFUSED) is waited out too',
      results: ['ECONNREFUSED', undefined],
      timeoutMs: 500,
      attempts: 2,
      waited: ['waiting up to 500ms for a driver at unix:///run/csi.sock (connect ECONNREFUSED)'],
    },
    {
      name: 'nobody ever listens: gives up at the deadline with our message',
      results: ['ENOENT'],
      timeoutMs: 1000,
      attempts: 1000 / SOCKET_POLL_MS + 1,
      waited: ['waiting up to 1s for a driver at unix:///run/csi.sock (connect ENOENT)'],
      error: /^no driver listening at unix:\/\/\/run\/csi\.sock \(connect ENOENT, waited 1s\)$/,
    },
    {
      name: 'no permission on the socket: fails at once, waiting would not help',
      results: ['EACCES'],
      timeoutMs: 30_000,
      attempts: 1,
      waited: [],
      error: /^cannot connect to the driver at unix:\/\/\/run\/csi\.sock: connect EACCES$/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const ports = fakePorts(c.results);
      const err = await waitForSocket('/run/csi.sock', c.timeoutMs, ports).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (c.error) {
        expect(err).to.be.instanceOf(DriverUnreachableError);
        expect((err as DriverUnreachableError).message).to.match(c.error);
        expect((err as DriverUnreachableError).exitCode).to.equal(2);
      } else expect(err).to.equal(undefined);
      expect(ports.attempts).to.equal(c.attempts);
      expect(ports.waited).to.deep.equal(c.waited);
    });
  }
});

describe('publish/unpublish --timeout', () => {
  for (const [raw, ms] of [
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['250ms', 250],
  ] as const) {
    it(`accepts ${raw}`, () => expect(parseTimeoutFlag(raw)).to.equal(ms));
  }
  for (const [raw, message] of [
    ['abc', /^--timeout: invalid duration "abc" \(use Go duration syntax/],
    ['30', /^--timeout: missing unit in duration "30"/],
    ['', /^--timeout: empty duration/],
    ['0s', /^--timeout must be greater than zero, got "0s"$/],
    ['-5s', /^--timeout must be greater than zero, got "-5s"$/],
  ] as const) {
    it(`rejects ${JSON.stringify(raw)} naming the flag`, () => expect(() => parseTimeoutFlag(raw)).to.throw(message));
  }
});

describe('publish --secrets-file', () => {
  it('reads a JSON object of strings', () => {
    expect(parseSecretsFile('s.json', '{"token":"abc","user":"u"}')).to.deep.equal({ token: 'abc', user: 'u' });
  });
  for (const [text, message] of [
    ['{"token": hunter2}', /^--secrets-file s\.json: not valid JSON$/],
    ['["a"]', /must hold a JSON object of string values$/],
    ['null', /must hold a JSON object/],
    ['{"n": 1}', /the value of "n" must be a string$/],
  ] as const) {
    it(`rejects ${text} naming the file, without echoing its content`, () => {
      expect(() => parseSecretsFile('s.json', text)).to.throw(message);
      expect(() => parseSecretsFile('s.json', text)).to.not.throw(/hunter2/);
    });
  }
});
