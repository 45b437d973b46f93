import { expect } from 'chai';
import { createLogger, parseLogLevel, redact } from '../../../../lib/logging/logger.js';

const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';

describe('redact', () => {
  const cases: [string, unknown, unknown][] = [
    ['a primitive', 'hello', 'hello'],
    ['null', null, null],
    ['a number', 42, 42],
    ['secrets at the top', { secrets: { password: 'p' }, pod: 'a' }, { secrets: '[REDACTED]', pod: 'a' }],
    [
      'every sensitive key',
      {
        token: 't',
        tokens: 't',
        password: 'p',
        passphrase: 'pp',
        contents: 'c',
        data: 'd',
        stringData: 'sd',
        [TOKENS_KEY]: 'tk',
        authorization: 'Bearer x',
        clientSecret: 'cs',
        accessToken: 'at',
        dbPassword: 'dp',
        privateKey: 'pk',
        key: 'k',
      },
      {
        token: '[REDACTED]',
        tokens: '[REDACTED]',
        password: '[REDACTED]',
        passphrase: '[REDACTED]',
        contents: '[REDACTED]',
        data: '[REDACTED]',
        stringData: '[REDACTED]',
        [TOKENS_KEY]: '[REDACTED]',
        authorization: '[REDACTED]',
        clientSecret: '[REDACTED]',
        accessToken: '[REDACTED]',
        dbPassword: '[REDACTED]',
        privateKey: '[REDACTED]',
        key: '[REDACTED]',
      },
    ],
    [
      'names, which are not secret values',
      {
        secret: 'team/web-tls',
        secretName: 'web-tls',
        secretProviderClass: 'db',
        secretRef: 'creds',
        keys: 2,
        tokenExpiry: '1h',
      },
      {
        secret: 'team/web-tls',
        secretName: 'web-tls',
        secretProviderClass: 'db',
        secretRef: 'creds',
        keys: 2,
        tokenExpiry: '1h',
      },
    ],
    [
      'a Secret object logged by name: its data stays hidden',
      { secret: { name: 'web', data: { 'tls.key': 'x' }, stringData: { a: 'b' } } },
      { secret: { name: 'web', data: '[REDACTED]', stringData: '[REDACTED]' } },
    ],
    [
      'nested deeply',
      { a: { b: { c: { token: 'deep', keep: 1 } } } },
      { a: { b: { c: { token: '[REDACTED]', keep: 1 } } } },
    ],
    [
      'inside arrays',
      { list: [{ password: 'x', n: 1 }, 'plain'] },
      { list: [{ password: '[REDACTED]', n: 1 }, 'plain'] },
    ],
    ['a Buffer as byte count', { file: Buffer.from('top secret') }, { file: '[10 bytes]' }],
    ['a Buffer at the top', Buffer.alloc(3), '[3 bytes]'],
    ['Buffers in arrays', [Buffer.alloc(0)], ['[0 bytes]']],
  ];
  for (const [name, input, expected] of cases) {
    it(`redacts ${name}`, () => expect(redact(input)).to.deep.equal(expected));
  }

  it('does not modify its input', () => {
    const input = { secrets: { password: 'p' } };
    redact(input);
    expect(input).to.deep.equal({ secrets: { password: 'p' } });
  });

  it('survives cycles', () => {
    const a: Record<string, unknown> = { name: 'a', token: 't' };
    a['self'] = a;
    a['list'] = [a];
    expect(redact(a)).to.deep.equal({ name: 'a', token: '[REDACTED]', self: '[Circular]', list: ['[Circular]'] });
  });

  // Regression test for a fixed bug: redact marks every object it has seen once as '[Circular]', so a shared, non-cyclic
  // reference (the same pod ref logged under two keys) loses its data in the second place.
  it('shows a shared (non-cyclic) reference in both places', () => {
    const pod = { name: 'app' };
    expect(redact({ from: pod, to: pod })).to.deep.equal({ from: { name: 'app' }, to: { name: 'app' } });
  });
});

async function captureStderr(fn: () => void): Promise<string> {
  const chunks: string[] = [];
  const original = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    fn();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  } finally {
    process.stderr.write = original;
  }
  return chunks.join('');
}

const SECRET = 's3cr3t-VALUE-9f2';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.tok-7a1';

describe('createLogger', () => {
  it('writes JSON lines to stderr without any secret or token value', async () => {
    const logger = createLogger({ component: 'test', level: 'debug' });
    const out = await captureStderr(() => {
      logger.info('mount', { secrets: { password: SECRET }, pod: 'default/app' });
      logger.debug('request', { request: { secrets: { k: SECRET }, attributes: { [TOKENS_KEY]: TOKEN } } });
      logger.warn('tokens', { [TOKENS_KEY]: TOKEN, file: Buffer.from(SECRET) });
      logger.error({ message: 'obj', token: TOKEN, nested: [{ password: SECRET }] });
      logger.info('last', { secrets: SECRET });
    });
    const lines = out.trim().split('\n');
    expect(lines).to.have.length(5);
    expect(out).to.not.include(SECRET);
    expect(out).to.not.include(TOKEN);
    const first = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(first).to.include({
      level: 'info',
      message: 'mount',
      component: 'test',
      secrets: '[REDACTED]',
      pod: 'default/app',
    });
    expect(first['timestamp']).to.be.a('string');
    const third = JSON.parse(lines[2] as string) as Record<string, unknown>;
    expect(third).to.include({ [TOKENS_KEY]: '[REDACTED]', file: `[${SECRET.length} bytes]` });
    expect(JSON.parse(lines[4] as string)).to.include({ component: 'test', secrets: '[REDACTED]' });
  });

  // Regression test for a fixed bug: the key `secret` was redacted, hiding the Secret's name in "Secret created".
  it("shows a synced Secret's name and keeps a CSI request's values hidden", async () => {
    const logger = createLogger({ component: 'test', level: 'debug' });
    const out = await captureStderr(() => {
      logger.info('Secret created', { secret: 'team/web-tls', keys: 2 });
      logger.debug('request', {
        secretProviderClass: 'db',
        secrets: { password: SECRET },
        volume_context: { [TOKENS_KEY]: TOKEN },
        data: SECRET,
        token: TOKEN,
      });
    });
    const [created, request] = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(created).to.include({ message: 'Secret created', secret: 'team/web-tls', keys: 2 });
    expect(request).to.deep.include({
      secretProviderClass: 'db',
      secrets: '[REDACTED]',
      volume_context: { [TOKENS_KEY]: '[REDACTED]' },
      data: '[REDACTED]',
      token: '[REDACTED]',
    });
    expect(out).to.not.include(SECRET);
    expect(out).to.not.include(TOKEN);
  });

  it('a child logger redacts too', async () => {
    const out = await captureStderr(() =>
      createLogger({ component: 'test' }).child({ pod: 'p' }).info('x', { token: TOKEN }),
    );
    expect(JSON.parse(out)).to.include({ pod: 'p', token: '[REDACTED]', message: 'x' });
  });

  // Regression test for a fixed bug: createLogger puts component in winston's defaultMeta, which is assigned over every
  // entry, so logger.child({ component: 'spc' }) (driver/main.ts) still logs component "test".
  it("a child logger's component wins over the parent's", async () => {
    const out = await captureStderr(() => createLogger({ component: 'test' }).child({ component: 'child' }).info('x'));
    expect(JSON.parse(out)).to.include({ component: 'child' });
  });

  it('honours the level', async () => {
    const logger = createLogger({ component: 'test', level: 'warn' });
    const out = await captureStderr(() => {
      logger.info('hidden');
      logger.warn('shown');
    });
    expect(
      out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { message: string }).message),
    ).to.deep.equal(['shown']);
  });
});

describe('createLogger: levels', () => {
  const levels = ['error', 'warn', 'info', 'debug'] as const;
  for (const threshold of levels) {
    it(`at ${threshold} writes exactly the levels up to ${threshold}`, async () => {
      const logger = createLogger({ component: 'test', level: threshold });
      const out = await captureStderr(() => {
        for (const level of levels) logger[level](level);
      });
      const written = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: string; message: string });
      const expected = levels.slice(0, levels.indexOf(threshold) + 1);
      expect(written.map((w) => w.level)).to.deep.equal(expected);
      expect(written.map((w) => w.message)).to.deep.equal(expected);
      expect(levels.filter((l) => logger.isLevelEnabled(l))).to.deep.equal(expected);
      expect(logger.level).to.equal(threshold);
    });
  }

  it('writes nothing when silent', async () => {
    const logger = createLogger({ component: 'test', level: 'debug', silent: true });
    expect(
      await captureStderr(() => {
        logger.error('e');
        logger.child({ a: 1 }).warn('w');
      }),
    ).to.equal('');
    expect(logger.isLevelEnabled('error')).to.equal(false);
  });

  it('reads nothing of an entry whose level is not written (no redaction, no serialisation)', async () => {
    let reads = 0;
    const fields = {
      get request() {
        reads++;
        return { secrets: { k: 'v' } };
      },
    };
    const logger = createLogger({ component: 'test', level: 'info' });
    const out = await captureStderr(() => {
      logger.debug('request', fields);
      logger.child({ pod: 'p' }).debug(fields);
    });
    expect(out).to.equal('');
    expect(reads).to.equal(0);
  });

  it('leaves uncaught exceptions and rejections to Node (winston handles neither)', async () => {
    const events = ['uncaughtException', 'unhandledRejection'] as const;
    const before = events.map((e) => process.listenerCount(e));
    const out = await captureStderr(() => createLogger({ component: 'test' }).info('x', { exception: true }));
    expect(JSON.parse(out)).to.include({ exception: true, message: 'x' });
    expect(events.map((e) => process.listenerCount(e))).to.deep.equal(before);
  });

  it('has written the line when the call returns (nothing is queued)', () => {
    const chunks: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      createLogger({ component: 'test' }).info('now');
    } finally {
      process.stderr.write = original;
    }
    expect(chunks).to.have.length(1);
    expect(chunks[0]).to.match(/"message":"now".*\n$/);
  });
});

describe('createLogger: children', () => {
  it("a grandchild's fields win over its parent's, and the call's over both", async () => {
    const out = await captureStderr(() =>
      createLogger({ component: 'test' })
        .child({ a: 1, b: 1, component: 'mid' })
        .child({ b: 2, c: 2 })
        .info('x', { c: 3 }),
    );
    expect(JSON.parse(out)).to.deep.include({ component: 'mid', a: 1, b: 2, c: 3, message: 'x', level: 'info' });
  });

  it('a child does not change its parent', async () => {
    const parent = createLogger({ component: 'test' });
    parent.child({ pod: 'p' });
    expect(JSON.parse(await captureStderr(() => parent.info('x')))).to.not.have.property('pod');
  });

  it("redacts a child's own fields", async () => {
    const out = await captureStderr(() =>
      createLogger({ component: 'test' })
        .child({ token: TOKEN, nested: { password: SECRET } })
        .info('x'),
    );
    expect(JSON.parse(out)).to.deep.include({ token: '[REDACTED]', nested: { password: '[REDACTED]' } });
  });
});

describe('parseLogLevel', () => {
  for (const level of ['error', 'warn', 'info', 'debug'] as const)
    it(`accepts ${level}`, () => expect(parseLogLevel(level)).to.equal(level));
  it('rejects others naming the flag', () => {
    expect(() => parseLogLevel('trace')).to.throw('--log-level must be one of error, warn, info, debug, got "trace"');
  });
});
