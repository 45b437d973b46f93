import { expect } from 'chai';
import { chmod, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProviderProcess, type MountOptions, type ProviderProcess } from '../support/provider-process.js';
import { nativeAddonPath } from '../../lib/native-addon.js';

// The exec provider process with real helper programs in a temp --helpers-dir: what a
// helper is given (argv entries, environment, working directory, stdin), versions from
// its `version` subcommand or the keyed digest, a rotation that runs no `get`, and the
// hostile helpers and classes: a hang, a flood, secrets on stderr, argument
// injection through pod names, names and symlinks leading out of the directory, and a
// forked child holding stdout open.

const POD = {
  'csi.storage.k8s.io/pod.namespace': 'team-a',
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/serviceAccount.name': 'web',
};
const TOKENS = JSON.stringify({
  helpers: { token: 'eyJhbGciOi.tok-SECRET.sig', expirationTimestamp: '2030-01-01T00:00:00Z' },
});

/** A class's attributes: `objects` as YAML lines, the pod's identity, extras. */
function attrs(objects: string, extra: Record<string, string> = {}): Record<string, string> {
  return { objects, ...POD, ...extra };
}

interface Recorded {
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly cwdEntries: string[];
  readonly stdin: string;
}

describe('exec provider process with real helpers', function () {
  this.timeout(60_000);
  let provider: ProviderProcess;
  let helpers: string;
  let out: string;

  /** Writes an executable helper into --helpers-dir. */
  async function helper(name: string, script: string): Promise<void> {
    await writeFile(join(helpers, name), script);
    await chmod(join(helpers, name), 0o755);
  }

  const recorded = async (name: string): Promise<Recorded> =>
    JSON.parse(await readFile(join(out, name), 'utf8')) as Recorded;
  const calls = async (name: string): Promise<string[]> =>
    existsSync(join(out, name)) ? (await readFile(join(out, name), 'utf8')).trim().split('\n') : [];
  const mount = (attributes: Record<string, string>, options?: MountOptions) => provider.mount(attributes, options);

  before(async () => {
    provider = await startProviderProcess(
      'exec',
      [],
      {},
      {
        extraArgs: (work) => [
          `--helpers-dir=${join(work, 'helpers')}`,
          `--hmac-key-file=${join(work, 'hmac.key')}`,
          '--helper-timeout=2s',
          '--max-output-bytes=65536',
          '--max-concurrent-helpers=2',
        ],
      },
    );
    helpers = join(provider.work, 'helpers');
    out = join(provider.work, 'out');
    await mkdir(helpers, { recursive: true });
    await mkdir(out, { recursive: true });
    // Records what it was given as JSON in $SSC_PARAM_OUT, then prints $SSC_PARAM_CONTENT. A node
    // script: a shell would add variables of its own (PWD, SHLVL) to what it saw.
    await helper(
      'record',
      `#!${process.execPath}
const fs = require('node:fs');
const [op] = process.argv.slice(2);
if (op === 'version') process.exit(3);
fs.writeFileSync(process.env.SSC_PARAM_OUT, JSON.stringify({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd(), cwdEntries: fs.readdirSync('.'), stdin: fs.readFileSync(0, 'utf8') }));
process.stdout.write(process.env.SSC_PARAM_CONTENT ?? '');
`,
    );
    // Versions from a file; logs each call to $SSC_PARAM_LOG.
    await helper(
      'versioned.sh',
      '#!/bin/sh\necho "$1 $2" >> "$SSC_PARAM_LOG"\ncase "$1" in\n  version) cat "$SSC_PARAM_DIR/$2.version" ;;\n  get) cat "$SSC_PARAM_DIR/$2" ;;\n  *) exit 64 ;;\nesac\n',
    );
    await helper('sleepy.sh', '#!/bin/sh\n[ "$1" = version ] && exit 3\necho "started" >&2\nsleep 30\n');
    await helper('flood.sh', '#!/bin/sh\n[ "$1" = version ] && exit 3\nexec yes flood\n');
    await helper(
      'fails.sh',
      `#!/bin/sh\n[ "$1" = version ] && exit 3\necho "login with $SSC_PARAM_PASSWORD and $SSC_SERVICE_ACCOUNT_TOKENS refused; ref=ref-SECRET" >&2\necho "second line $SSC_PARAM_PASSWORD" >&2\nexit "$SSC_PARAM_CODE"\n`,
    );
    await helper(
      'forks.sh',
      '#!/bin/sh\n[ "$1" = version ] && exit 3\nsleep 300 &\necho $! > "$SSC_PARAM_PIDFILE"\nprintf forked-content\n',
    );
    // Leaves two processes outside its process group: one it starts with setsid, and one
    // a setsid'd shell starts and leaves behind (a double-forking daemon).
    await helper(
      'escapes.sh',
      '#!/bin/sh\n[ "$1" = version ] && exit 3\n' +
        'setsid sleep 300 </dev/null >/dev/null 2>&1 &\necho $! > "$SSC_PARAM_PIDFILE"\n' +
        'setsid sh -c \'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$0"\' "$SSC_PARAM_PIDFILE2" </dev/null >/dev/null 2>&1 &\n' +
        'while [ ! -s "$SSC_PARAM_PIDFILE2" ]; do sleep 0.01; done\nprintf escaped-content\n',
    );
    await helper('no-interpreter.sh', '#!/nonexistent/interpreter\necho hi\n');
    await writeFile(join(helpers, 'not-executable.sh'), '#!/bin/sh\necho hi\n');
    await writeFile(join(provider.work, 'outside.sh'), '#!/bin/sh\necho outside\n');
    await chmod(join(provider.work, 'outside.sh'), 0o755);
    await symlink(join(provider.work, 'outside.sh'), join(helpers, 'escape.sh'));
    await symlink(join(helpers, 'record'), join(helpers, 'alias'));
    await mkdir(join(helpers, 'sub'));
    await helper('sub/inner.sh', '#!/bin/sh\necho inner\n');
    await symlink(join(helpers, 'sub', 'inner.sh'), join(helpers, 'deeper.sh'));
  });
  after(async () => {
    await provider?.stop();
  });

  it("get: stdout is the file, byte for byte, with the class mode or the Mount's; the helper saw argv, a clean environment, an empty temp cwd, no stdin", async () => {
    const content = 'line one\n\ttabbed \u00ff';
    const res = await mount(
      attrs(
        `- objectName: db/password\n  helper: record\n  filePermission: 0400\n  parameters: {out: ${join(out, 'r1')}, content: "line one\\n\\ttabbed \\xff", vaultAddr: "http://x:1"}\n`,
      ),
    );
    expect(res.files.map((f) => [f.path, f.mode, Buffer.from(f.contents).toString('hex')])).to.deep.equal([
      ['db/password', 0o400, Buffer.from(content).toString('hex')],
    ]);
    const r = await recorded('r1');
    expect(r.argv).to.deep.equal(['get', 'db/password', 'team-a', 'web-0', 'web']);
    expect(r.env).to.deep.equal({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/nonexistent',
      LANG: 'C.UTF-8',
      SSC_PARAM_OUT: join(out, 'r1'),
      SSC_PARAM_CONTENT: content,
      SSC_PARAM_VAULT_ADDR: 'http://x:1',
    });
    expect(r.cwdEntries).to.deep.equal([]);
    expect(r.cwd).to.not.equal(provider.work);
    expect(existsSync(r.cwd), 'the working directory is removed after the call').to.equal(false);
    expect(r.stdin).to.equal('');
  });

  it('tokens reach the helper only when the class sets passServiceAccountTokens: "true"', async () => {
    const tokens = { 'csi.storage.k8s.io/serviceAccount.tokens': TOKENS };
    await mount(attrs(`- {objectName: a, helper: record, parameters: {out: ${join(out, 't0')}}}`, tokens));
    expect((await recorded('t0')).env).to.not.have.property('SSC_SERVICE_ACCOUNT_TOKENS');
    await mount(
      attrs(`- {objectName: a, helper: record, parameters: {out: ${join(out, 't1')}}}`, {
        ...tokens,
        passServiceAccountTokens: 'true',
      }),
    );
    expect((await recorded('t1')).env['SSC_SERVICE_ACCOUNT_TOKENS']).to.equal(TOKENS);
    const err = await provider.mountError(
      attrs('- {objectName: a, helper: record}', { passServiceAccountTokens: 'true' }),
    );
    expect(err.code).to.equal('FAILED_PRECONDITION');
    expect(err.details).to.match(
      /passServiceAccountTokens is "true" but the driver passed no csi\.storage\.k8s\.io\/serviceAccount\.tokens/,
    );
  });

  const hostile = [
    'a;touch pwned',
    '$(touch pwned)',
    '`touch pwned`',
    'line1\nline2',
    '-rf',
    '--help',
    'quote\'"',
    ' spaced ',
    '*',
  ];
  it('pod names, namespaces and service accounts reach the helper as single argv entries, unchanged, and no shell ran them', async () => {
    for (const [i, value] of hostile.entries()) {
      await mount({
        ...attrs(`- {objectName: obj, helper: record, parameters: {out: ${join(out, `inj${i}`)}}}`),
        'csi.storage.k8s.io/pod.name': value,
        'csi.storage.k8s.io/pod.namespace': `ns${value}`,
        'csi.storage.k8s.io/serviceAccount.name': `-${value}`,
      });
      const r = await recorded(`inj${i}`);
      expect(r.argv, JSON.stringify(value)).to.deep.equal(['get', 'obj', `ns${value}`, value, `-${value}`]);
      expect(r.cwdEntries).to.deep.equal([]);
    }
    expect(existsSync(join(provider.work, 'pwned'))).to.equal(false);
  });

  it('an objectName starting with - is passed as it is too', async () => {
    await mount(attrs(`- {objectName: -n, helper: record, parameters: {out: ${join(out, 'dash')}}}`));
    expect((await recorded('dash')).argv).to.deep.equal(['get', '-n', 'team-a', 'web-0', 'web']);
  });

  it("versions: the helper's `version` line, else (exit 3) the keyed digest, stable across Mounts and a restart-free key", async () => {
    const dir = join(provider.work, 'store');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'a'), 'alpha');
    await writeFile(join(dir, 'a.version'), 'v7\n');
    const log = join(out, 'versions.log');
    const objects = `- {objectName: a, helper: versioned.sh, parameters: {dir: ${dir}, log: ${log}}}\n- {objectName: b, helper: record, parameters: {out: ${join(out, 'v-b')}, content: bravo}}\n`;
    const first = await mount(attrs(objects));
    expect(first.object_version.map((v) => [v.id, v.version])).to.deep.equal([
      ['a', 'v7'],
      ['b', first.object_version[1]?.version],
    ]);
    expect(first.object_version[1]?.version).to.match(/^[0-9a-f]{64}$/);
    expect(first.object_version[1]?.version).to.not.include('bravo');
    expect(await calls('versions.log'), 'version first, then get').to.deep.equal(['version a', 'get a']);
    const again = await mount(attrs(objects), { targetPath: '/elsewhere' });
    expect(again.object_version).to.deep.equal(first.object_version);
  });

  it('rotation: every version as mounted and the class as last answered → no files and no get; an edited class or a new version → files', async () => {
    const dir = join(provider.work, 'store2');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'x'), 'x-1');
    await writeFile(join(dir, 'x.version'), '1');
    await writeFile(join(dir, 'y'), 'y-1');
    await writeFile(join(dir, 'y.version'), '1');
    const log = join(out, 'rotation.log');
    const objects = `- {objectName: x, helper: versioned.sh, parameters: {dir: ${dir}, log: ${log}}}\n- {objectName: y, helper: versioned.sh, parameters: {dir: ${dir}, log: ${log}}}\n`;
    const targetPath = '/var/lib/kubelet/pods/rot/volumes/v';
    const first = await mount(attrs(objects), { targetPath });
    expect(first.files.map((f) => f.path)).to.deep.equal(['x', 'y']);
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    const logged = (await calls('rotation.log')).length;

    const unchanged = await mount(attrs(objects), { targetPath, current });
    expect(unchanged.files).to.deep.equal([]);
    expect(unchanged.object_version.map((v) => [v.id, v.version])).to.deep.equal([
      ['x', '1'],
      ['y', '1'],
    ]);
    expect((await calls('rotation.log')).slice(logged).sort(), 'only version calls').to.deep.equal([
      'version x',
      'version y',
    ]);

    // The same versions, but the class changed (another attribute): files again.
    const edited = await mount(attrs(objects, { extra: 'changed' }), { targetPath, current });
    expect(edited.files.map((f) => f.path)).to.deep.equal(['x', 'y']);

    await writeFile(join(dir, 'y'), 'y-2');
    await writeFile(join(dir, 'y.version'), '2');
    const rotated = await mount(attrs(objects, { extra: 'changed' }), { targetPath, current });
    expect(rotated.files.map((f) => [f.path, Buffer.from(f.contents).toString()])).to.deep.equal([
      ['x', 'x-1'],
      ['y', 'y-2'],
    ]);
    expect(rotated.object_version.map((v) => [v.id, v.version])).to.deep.equal([
      ['x', '1'],
      ['y', '2'],
    ]);
  });

  it('rotation with digest versions: get runs, and unchanged content still answers no files', async () => {
    const targetPath = '/var/lib/kubelet/pods/digest/volumes/v';
    const objects = `- {objectName: d, helper: record, parameters: {out: ${join(out, 'dg')}, content: same}}`;
    const first = await mount(attrs(objects), { targetPath });
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    const second = await mount(attrs(objects), { targetPath, current });
    expect(second.files).to.deep.equal([]);
    expect(second.object_version).to.deep.equal(first.object_version);
  });

  it('a helper that hangs is killed at --helper-timeout: DEADLINE_EXCEEDED with its stderr line', async () => {
    const started = Date.now();
    const err = await provider.mountError(attrs('- {objectName: s, helper: sleepy.sh}'));
    expect(Date.now() - started).to.be.below(6000);
    expect(err.code).to.equal('DEADLINE_EXCEEDED');
    expect(err.details).to.equal(
      'exec provider: helper "sleepy.sh" get "s" ran longer than 2000 ms and was killed: started',
    );
  });

  it('a helper that prints more than --max-output-bytes is killed: RESOURCE_EXHAUSTED, no files', async () => {
    const started = Date.now();
    const err = await provider.mountError(attrs('- {objectName: f, helper: flood.sh}'));
    expect(Date.now() - started).to.be.below(3000);
    expect(err.code).to.equal('RESOURCE_EXHAUSTED');
    expect(err.details).to.equal(
      'exec provider: helper "flood.sh" get "f" printed more than 65536 bytes (--max-output-bytes) and was killed',
    );
  });

  const exits: [number, string][] = [
    [1, 'FAILED_PRECONDITION'],
    [66, 'NOT_FOUND'],
    [75, 'UNAVAILABLE'],
    [77, 'PERMISSION_DENIED'],
  ];
  for (const [code, status] of exits) {
    it(`exit ${code} → ${status} with stderr's first line, every parameter, token and Secret value redacted`, async () => {
      const err = await provider.mountError(
        attrs(`- {objectName: e, helper: fails.sh, parameters: {password: hunter2-param, code: "${code}"}}`, {
          'csi.storage.k8s.io/serviceAccount.tokens': TOKENS,
          passServiceAccountTokens: 'true',
        }),
        { secrets: { clientSecret: 'ref-SECRET' }, deadlineMs: 20_000 },
      );
      expect(err.code).to.equal(status);
      expect(err.details).to.equal(
        `exec provider: helper "fails.sh" get "e" exited with ${code}: login with [redacted] and [redacted] refused; ref=[redacted]`,
      );
      for (const secret of ['hunter2', 'tok-SECRET', 'ref-SECRET']) expect(err.details).to.not.include(secret);
    });
  }

  it('all or nothing: one failing object fails the Mount, with no files of the others', async () => {
    const err = await provider.mountError(
      attrs(
        `- {objectName: ok, helper: record, parameters: {out: ${join(out, 'aon')}, content: fine}}\n- {objectName: bad, helper: fails.sh, parameters: {code: "1"}}`,
      ),
    );
    expect(err.code).to.equal('FAILED_PRECONDITION');
    expect(err.details).to.match(/helper "fails\.sh" get "bad" exited with 1/);
  });

  it('a helper whose forked child keeps stdout open: the group is killed when the helper exits, the Mount does not wait', async () => {
    const pidFile = join(out, 'child.pid');
    const started = Date.now();
    const res = await mount(attrs(`- {objectName: k, helper: forks.sh, parameters: {pidfile: ${pidFile}}}`));
    expect(Date.now() - started).to.be.below(1800);
    expect(Buffer.from(res.files[0]?.contents ?? []).toString()).to.equal('forked-content');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(pid).to.be.greaterThan(0);
    // Gone, or a zombie (killed; its new parent, this machine's init, reaps it when it will).
    const alive = () => {
      try {
        return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    // The kill is sent before the Mount answers.
    for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(), 'the forked sleep was killed').to.equal(false);
  });

  it("a helper's descendants that left its process group (setsid, a double fork) are killed and reaped before the Mount answers", async function () {
    if (!existsSync(nativeAddonPath('process_reaper'))) {
      // Without a C compiler there is no addon: the provider warns (native-addon-optional.test.ts).
      process.stderr.write(
        '    skipping the setsid test: the process-reaper addon is not built (no make or C compiler)\n',
      );
      this.skip();
    }
    const pidFiles = [join(out, 'escaped.pid'), join(out, 'escaped2.pid')];
    const res = await mount(
      attrs(`- {objectName: e, helper: escapes.sh, parameters: {pidfile: ${pidFiles[0]}, pidfile2: ${pidFiles[1]}}}`),
    );
    const pids = await Promise.all(pidFiles.map(async (f) => Number((await readFile(f, 'utf8')).trim())));
    try {
      expect(Buffer.from(res.files[0]?.contents ?? []).toString()).to.equal('escaped-content');
      // In another session, outside the helper's group: only the provider's reaper can reach them.
      for (const pid of pids) expect(pid).to.be.greaterThan(0);
      const present = (pid: number) => existsSync(`/proc/${pid}`);
      expect(pids.filter(present), 'killed and reaped (no zombie left) when the Mount answered').to.deep.equal([]);
    } finally {
      for (const pid of pids) {
        try {
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });

  const refused: [string, string, string, RegExp][] = [
    [
      'a name with /',
      '../outside.sh',
      'INVALID_ARGUMENT',
      /helper "\.\.\/outside\.sh" must be a file name in --helpers-dir/,
    ],
    ['an absolute path', '/bin/sh', 'INVALID_ARGUMENT', /helper "\/bin\/sh" must be a file name/],
    ['..', '..', 'INVALID_ARGUMENT', /helper "\.\." must be a file name, not "\." or "\.\."/],
    ['a path into a subdirectory', 'sub/inner.sh', 'INVALID_ARGUMENT', /must be a file name in --helpers-dir/],
    [
      'a symlink leading out of the directory',
      'escape.sh',
      'PERMISSION_DENIED',
      /helper "escape\.sh" resolves outside --helpers-dir/,
    ],
    [
      'a symlink into a subdirectory',
      'deeper.sh',
      'PERMISSION_DENIED',
      /helper "deeper\.sh" resolves outside --helpers-dir/,
    ],
    ['a missing helper', 'nope.sh', 'FAILED_PRECONDITION', /helper "nope\.sh" is not in --helpers-dir/],
    ['a directory', 'sub', 'FAILED_PRECONDITION', /helper "sub" is not a regular file/],
    [
      'a file that is not executable',
      'not-executable.sh',
      'FAILED_PRECONDITION',
      /helper "not-executable\.sh" is not executable/,
    ],
    [
      'a script whose interpreter is missing',
      'no-interpreter.sh',
      'FAILED_PRECONDITION',
      /helper "no-interpreter\.sh" version "o" could not start \(ENOENT\)/,
    ],
  ];
  for (const [name, helperName, code, message] of refused) {
    it(`refuses ${name} (${code}); nothing outside runs`, async () => {
      const err = await provider.mountError(attrs(`- {objectName: o, helper: ${JSON.stringify(helperName)}}`));
      expect([err.code, err.details]).to.satisfy(
        ([c, d]: [string, string]) => c === code && message.test(d),
        `${err.code}: ${err.details}`,
      );
    });
  }

  it('a symlink to a helper inside the directory runs that helper', async () => {
    const res = await mount(
      attrs(`- {objectName: l, helper: alias, parameters: {out: ${join(out, 'alias')}, content: via-link}}`),
    );
    expect(Buffer.from(res.files[0]?.contents ?? []).toString()).to.equal('via-link');
  });

  it('--max-concurrent-helpers bounds the helpers running at once, across objects', async () => {
    const log = join(out, 'overlap.log');
    await writeFile(
      join(helpers, 'slow.sh'),
      '#!/bin/sh\n[ "$1" = version ] && exit 3\necho "start $(date +%s%N)" >> "$SSC_PARAM_LOG"\nsleep 0.3\necho "end $(date +%s%N)" >> "$SSC_PARAM_LOG"\necho ok\n',
    );
    await chmod(join(helpers, 'slow.sh'), 0o755);
    const objects = [1, 2, 3, 4]
      .map((i) => `- {objectName: s${i}, helper: slow.sh, parameters: {log: ${log}}}`)
      .join('\n');
    await mount(attrs(objects));
    let running = 0;
    let most = 0;
    const events = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => l.split(' ') as [string, string])
      .sort((a, b) => (BigInt(a[1]) < BigInt(b[1]) ? -1 : 1));
    for (const [what] of events) {
      running += what === 'start' ? 1 : -1;
      most = Math.max(most, running);
    }
    expect(events).to.have.length(8);
    expect(most).to.equal(2);
  });

  it('the HMAC key file was created with mode 0600', async () => {
    expect((await stat(join(provider.work, 'hmac.key'))).mode & 0o777).to.equal(0o600);
  });
});
