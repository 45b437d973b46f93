import { expect } from 'chai';
import { createLogger, type LogLevel } from '../../../../lib/logging/logger.js';

// The exact lines an operator sees, written by createLogger's winston logger (its formats
// and stderr transport) to stderr. The shape is the one the winston-based logger has always
// written (docs/configuration.md#logs), so dashboards and log queries built on it keep
// working; the timestamp, the one value that changes, is checked and then fixed.

const TS = '"timestamp":"2024-01-02T03:04:05.678Z"';
const ISO_TIMESTAMP = /"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/;

/** What stderr received during `fn`, which must have written it before returning (nothing is queued). */
function stderrOf(fn: () => void): string {
  const chunks: string[] = [];
  const original = process.stderr.write;
  const capture = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  process.stderr.write = capture as typeof process.stderr.write;
  try {
    fn();
  } finally {
    process.stderr.write = original;
  }
  return chunks.join('');
}

/** The line a `component: 'test'` logger (a child with `fields`, if any) writes for one call; its timestamp as TS. */
function line(level: LogLevel, args: unknown[], fields?: Record<string, unknown>): string {
  const root = createLogger({ component: 'test', level: 'debug' });
  const logger = fields ? root.child(fields) : root;
  // Any arguments, as JavaScript callers (and casts) can pass them.
  const method = logger[level] as (...a: unknown[]) => void;
  const out = stderrOf(() => method(...args));
  return out.replace(ISO_TIMESTAMP, TS);
}

function withStack<E extends Error>(err: E, stack: string): E {
  err.stack = stack;
  return err;
}

class CodedError extends Error {
  readonly code = 'E_X';
  readonly token = 'tok';
}

describe('log lines', () => {
  const cycle: Record<string, unknown> = { name: 'a' };
  cycle['self'] = cycle;
  cycle['list'] = [cycle];
  const shared = { n: 1 };
  const cases: [string, LogLevel, unknown[], string?][] = [
    ['a message', 'info', ['hello'], `{"component":"test","level":"info","message":"hello",${TS}}`],
    ['no arguments', 'info', [], `{"component":"test","level":"info","message":"",${TS}}`],
    [
      'fields in sorted key order, redacted at any depth',
      'info',
      ['hello', { b: 1, a: 'x', token: 't', nested: { password: 'p', z: [1, { key: 'k' }] } }],
      `{"a":"x","b":1,"component":"test","level":"info","message":"hello","nested":{"password":"[REDACTED]","z":[1,{"key":"[REDACTED]"}]},${TS},"token":"[REDACTED]"}`,
    ],
    [
      'fields with their own message',
      'warn',
      ['outer', { message: 'inner', x: 1 }],
      `{"component":"test","level":"warn","message":"outer inner",${TS},"x":1}`,
    ],
    [
      'fields cannot change the level, but can the component',
      'warn',
      ['m', { level: 'debug', component: 'over' }],
      `{"component":"over","level":"warn","message":"m",${TS}}`,
    ],
    ['an Error as fields', 'error', ['failed', withStack(new Error('boom'), 'Error: boom\n    at f')]],
    ['an Error with own fields as fields', 'error', ['failed', withStack(new CodedError('boom2'), 'at g')]],
    ['an Error alone', 'error', [withStack(new CodedError('alone'), 'at h')]],
    [
      'an Error with a cause',
      'error',
      ['failed', withStack(new Error('outer', { cause: new Error('inner') }), 'at i')],
    ],
    [
      'an Error inside fields: its own fields only',
      'error',
      ['failed', { error: new Error('nested'), e2: new CodedError('n2') }],
      `{"component":"test","e2":{"code":"E_X","token":"[REDACTED]"},"error":{},"level":"error","message":"failed",${TS}}`,
    ],
    [
      'an Error without a message alone',
      'error',
      [new Error('')],
      `{"component":"test","level":"error","message":{},${TS}}`,
    ],
    [
      'an object with a message alone',
      'info',
      [{ message: 'obj', token: 'x', q: 2 }],
      `{"component":"test","level":"info","message":"obj","q":2,${TS},"token":"[REDACTED]"}`,
    ],
    [
      'an object without a message alone',
      'info',
      [{ q: 2 }],
      `{"component":"test","level":"info","message":{"q":2},${TS}}`,
    ],
    ['a number', 'info', [42], `{"component":"test","level":"info","message":42,${TS}}`],
    [
      'non-object fields are dropped',
      'info',
      ['m', 'extra'],
      `{"component":"test","level":"info","message":"m",${TS}}`,
    ],
    ['null fields', 'info', ['m', null], `{"component":"test","level":"info","message":"m",${TS}}`],
    [
      'BigInts as strings',
      'info',
      ['b', { n: 10n, arr: [1n], o: { m: 2n } }],
      `{"arr":["1"],"component":"test","level":"info","message":"b","n":"10","o":{"m":"2"},${TS}}`,
    ],
    [
      'values JSON has not',
      'info',
      ['u', { u: undefined, n: null, f: () => 1, s: Symbol('x'), arr: [undefined, () => 1, null, NaN, Infinity, -0] }],
      `{"arr":[null,null,null,null,null,0],"component":"test","level":"info","message":"u","n":null,${TS}}`,
    ],
    [
      'objects without own fields',
      'info',
      ['d', { d: new Date(0), m: new Map([[1, 2]]), s: new Set([1]), r: /x/ }],
      `{"component":"test","d":{},"level":"info","m":{},"message":"d","r":{},"s":{},${TS}}`,
    ],
    [
      'a Buffer as its size, other typed arrays by index',
      'info',
      ['b', { b: Buffer.from('abc'), u: new Uint8Array([1, 2]) }],
      `{"b":"[3 bytes]","component":"test","level":"info","message":"b",${TS},"u":{"0":1,"1":2}}`,
    ],
    [
      'cycles',
      'info',
      ['c', { a: cycle, top: cycle }],
      `{"a":{"list":["[Circular]"],"name":"a","self":"[Circular]"},"component":"test","level":"info","message":"c",${TS},"top":{"list":["[Circular]"],"name":"a","self":"[Circular]"}}`,
    ],
    [
      'a cycle through the fields object',
      'info',
      ['c', cycle],
      `{"component":"test","level":"info","list":[{"list":"[Circular]","name":"a","self":"[Circular]"}],"message":"c","name":"a","self":{"list":["[Circular]"],"name":"a","self":"[Circular]"},${TS}}`,
    ],
    [
      'a shared object twice',
      'info',
      ['s', { from: shared, to: shared }],
      `{"component":"test","from":{"n":1},"level":"info","message":"s",${TS},"to":{"n":1}}`,
    ],
    [
      'keys sorted as strings',
      'info',
      ['k', { b: 1, 10: 'ten', 2: 'two', A: 3, _: 4, é: 5 }],
      `{"10":"ten","2":"two","A":3,"_":4,"b":1,"component":"test","level":"info","message":"k",${TS},"é":5}`,
    ],
    [
      'JSON string escapes',
      'info',
      ['line\nbreak "q" \\ \u0001 \ud800 é 😀', { s: 'tab\there' }],
      `{"component":"test","level":"info","message":"line\\nbreak \\"q\\" \\\\ \\u0001 \\ud800 é 😀","s":"tab\\there",${TS}}`,
    ],
    [
      'a timestamp of its own',
      'info',
      ['t', { timestamp: 'fixed' }],
      '{"component":"test","level":"info","message":"t","timestamp":"fixed"}',
    ],
    [
      'stack and cause fields',
      'info',
      ['t', { stack: 'at x', cause: 'c' }],
      `{"cause":"c","component":"test","level":"info","message":"t","stack":"at x",${TS}}`,
    ],
    [
      'secret-valued names and names',
      'info',
      [
        'n',
        {
          clientSecret: 'x',
          secretName: 'n',
          'csi.storage.k8s.io/serviceAccount.tokens': 't',
          data: { a: 1 },
          token: undefined,
        },
      ],
      `{"clientSecret":"[REDACTED]","component":"test","csi.storage.k8s.io/serviceAccount.tokens":"[REDACTED]","data":"[REDACTED]","level":"info","message":"n","secretName":"n",${TS},"token":"[REDACTED]"}`,
    ],
    [
      'an array as fields',
      'info',
      ['arr', [1, 2, { token: 'x' }]],
      `{"0":1,"1":2,"2":{"token":"[REDACTED]"},"component":"test","level":"info","message":"arr",${TS}}`,
    ],
    // Only a string message is written as it is; any other message is redacted like every field.
    [
      'an object message, redacted',
      'info',
      [{ message: { token: 'x', b: 1 } }],
      `{"component":"test","level":"info","message":{"b":1,"token":"[REDACTED]"},${TS}}`,
    ],
    // winston's own log methods drop the fields of a message with a printf token (%s, %d…) in it.
    [
      'a % in the message keeps the fields',
      'info',
      ['50% done %s', { a: 1 }],
      `{"a":1,"component":"test","level":"info","message":"50% done %s",${TS}}`,
    ],
    [
      'placeholders are text, nothing is substituted',
      'info',
      ['%s %d %j %o %%', { a: 1 }, 'x'],
      `{"a":1,"component":"test","level":"info","message":"%s %d %j %o %%",${TS}}`,
    ],
    // winston's splat format would read this field as the placeholders' values: there is none.
    [
      'a field named splat is a field',
      'info',
      ['m %s', { splat: ['x'] }],
      `{"component":"test","level":"info","message":"m %s","splat":["x"],${TS}}`,
    ],
    // winston's transports drop an entry with `exception: true` (their mark of an uncaught
    // exception) unless they handle exceptions.
    [
      'a field named exception',
      'warn',
      ['e', { exception: true }],
      `{"component":"test","exception":true,"level":"warn","message":"e",${TS}}`,
    ],
    [
      'own __proto__ keys are fields',
      'info',
      ['p', JSON.parse('{"__proto__":{"token":"t","a":1},"b":2,"n":{"__proto__":3}}')],
      `{"__proto__":{"a":1,"token":"[REDACTED]"},"b":2,"component":"test","level":"info","message":"p","n":{"__proto__":3},${TS}}`,
    ],
    // A toJSON of the caller's could throw or show what redaction hid: it is a function, and
    // functions are not logged.
    [
      'toJSON is never called',
      'info',
      [
        'j',
        {
          o: {
            a: 1,
            toJSON() {
              throw new Error('x');
            },
          },
          toJSON: () => ({ token: 't' }),
        },
      ],
      `{"component":"test","level":"info","message":"j","o":{"a":1},${TS}}`,
    ],
  ];
  const errorLines: Record<string, string> = {
    'an Error as fields': `{"component":"test","level":"error","message":"failed boom","stack":"Error: boom\\n    at f",${TS}}`,
    'an Error with own fields as fields': `{"code":"E_X","component":"test","level":"error","message":"failed boom2","stack":"at g",${TS},"token":"[REDACTED]"}`,
    'an Error alone': `{"code":"E_X","component":"test","level":"error","message":"alone","stack":"at h",${TS},"token":"[REDACTED]"}`,
    'an Error with a cause': `{"cause":{},"component":"test","level":"error","message":"failed outer","stack":"at i",${TS}}`,
  };
  for (const [name, level, args, expected] of cases) {
    it(name, () => expect(line(level, args)).to.equal(`${expected ?? errorLines[name]}\n`));
  }

  it("child fields under the call's", () => {
    expect(line('info', ['x', { c: 3 }], { a: 1, b: 2, c: 2, token: 'T' })).to.equal(
      `{"a":1,"b":2,"c":3,"component":"test","level":"info","message":"x",${TS},"token":"[REDACTED]"}\n`,
    );
  });

  it("a child's own __proto__ key is a field, and no prototype changes", () => {
    expect(line('info', ['c'], JSON.parse('{"__proto__":{"polluted":"yes"}}') as Record<string, unknown>)).to.equal(
      `{"__proto__":{"polluted":"yes"},"component":"test","level":"info","message":"c",${TS}}\n`,
    );
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('an Error alone keeps the child fields', () => {
    expect(line('error', [withStack(new CodedError('ce'), 'at j')], { a: 1 })).to.equal(
      `{"a":1,"code":"E_X","component":"test","level":"error","message":"ce","stack":"at j",${TS},"token":"[REDACTED]"}\n`,
    );
  });
});

describe('log lines never throw', () => {
  it('a getter that throws shows as [Unreadable], the rest of the entry stays', () => {
    const fields = {
      a: 1,
      get bad(): never {
        throw new Error('getter');
      },
      nested: {
        get worse(): never {
          throw new Error('deep');
        },
        ok: true,
      },
    };
    expect(line('info', ['g', fields])).to.equal(
      `{"a":1,"bad":"[Unreadable]","component":"test","level":"info","message":"g","nested":{"ok":true,"worse":"[Unreadable]"},${TS}}\n`,
    );
  });

  it('a getter that throws on `message` of an object logged alone', () => {
    const entry = {
      get message(): never {
        throw new Error('no');
      },
    };
    expect(line('info', [entry])).to.equal(
      `{"component":"test","level":"info","message":{"message":"[Unreadable]"},${TS}}\n`,
    );
  });

  it('a revoked Proxy and a Proxy whose ownKeys throws', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('keys');
        },
      },
    );
    expect(line('info', ['p', { proxy, hostile }])).to.equal(
      `{"component":"test","hostile":"[Unreadable]","level":"info","message":"p","proxy":"[Unreadable]",${TS}}\n`,
    );
  });

  it('a getter that logs: both lines are written before the call returns', () => {
    const logger = createLogger({ component: 'test' });
    const out = stderrOf(() =>
      logger.info('outer', {
        nested: {
          get lazy() {
            logger.info('inner');
            return 1;
          },
        },
      }),
    );
    const messages = out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { message: string }).message);
    expect(messages.sort()).to.deep.equal(['inner', 'outer']);
  });

  it('a sensitive key is never read', () => {
    let reads = 0;
    const fields = {
      get token() {
        reads++;
        return 'x';
      },
    };
    expect(line('info', ['t', { nested: fields }])).to.include('"nested":{"token":"[REDACTED]"}');
    expect(reads).to.equal(0);
  });
});
