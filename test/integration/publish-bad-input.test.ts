import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { isPayloadDirName } from '../../driver/volume/payload-repair.js';
import { failure } from '../support/call-outcome.js';

async function gone(path: string): Promise<boolean> {
  return lstat(path).then(
    () => false,
    () => true,
  );
}

describe('NodePublishVolume bad input (real driver process)', function () {
  let stack: DriverStack;
  let provider: ScriptedProvider;
  const classes = {
    'scripted.yaml': fileClass('scripted', [{ objectName: 'x' }], 'scripted'),
    'missing-provider.yaml': fileClass('nobody', [{ objectName: 'x' }], 'not-running'),
    'dead.yaml': fileClass('dead', [{ objectName: 'x' }], 'dead'),
    'slash.yaml': fileClass('slash', [{ objectName: 'x' }], '"../evil"'),
  };

  before(async () => {
    stack = await startDriverStack({
      classes,
      driverArgs: ['--provider-timeout=1s', '--max-call-recv-msg-size=65536'],
    });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'x', contents: 'one' }]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  describe('request validation (upstream messages, INVALID_ARGUMENT)', () => {
    const cases: [string, (r: Record<string, unknown>) => void, string][] = [
      [
        'no volume capability',
        (r) => {
          delete r['volume_capability'];
          r['volume_id'] = '';
        },
        'Volume capability missing in request',
      ],
      [
        'no volume id',
        (r) => {
          r['volume_id'] = '';
        },
        'Volume ID missing in request',
      ],
      [
        'no target path',
        (r) => {
          r['target_path'] = '';
        },
        'Target path missing in request',
      ],
      [
        'no volume attributes',
        (r) => {
          r['volume_context'] = {};
        },
        'Volume attributes missing in request',
      ],
      [
        'readonly false',
        (r) => {
          r['readonly'] = false;
        },
        'Readonly is not true in request',
      ],
    ];
    for (const [name, mutate, message] of cases) {
      it(`rejects ${name}`, async () => {
        const req = stack.request(stack.targetPath('v'), 'scripted') as unknown as Record<string, unknown>;
        mutate(req);
        expect(await failure(stack.client.publish(req))).to.deep.equal({ code: 'INVALID_ARGUMENT', message });
      });
    }
  });

  it('NOT_FOUND names namespace/name for a missing SecretProviderClass', async () => {
    const target = stack.targetPath('nf');
    const f = await failure(stack.client.publish(stack.request(target, 'no-such-class', 'nf')));
    expect(f.code).to.equal('NOT_FOUND');
    expect(f.message).to.include('SecretProviderClass default/no-such-class').and.include('pod default/nf');
    expect(await gone(target)).to.equal(true);
  });

  it('UNAVAILABLE when the provider socket is absent, leaving nothing behind', async () => {
    const target = stack.targetPath('absent');
    const f = await failure(stack.client.publish(stack.request(target, 'nobody', 'absent')));
    expect(f.code).to.equal('UNAVAILABLE');
    expect(f.message).to.include('provider "not-running" is not running on this node');
    expect(await gone(target)).to.equal(true);
    expect(await mountsUnder(target)).to.deep.equal([]);
  });

  it('UNAVAILABLE when the socket file exists but nothing listens', async () => {
    // A socket file that was bound but never listened on: connect() is refused.
    execFileSync('python3', [
      '-c',
      'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      join(stack.providersDir, 'dead.sock'),
    ]);
    const target = stack.targetPath('dead');
    const f = await failure(stack.client.publish(stack.request(target, 'dead', 'dead')));
    expect(f.code).to.equal('UNAVAILABLE');
    expect(f.message).to.include('provider "dead" Mount unavailable (socket ');
    expect(await gone(target)).to.equal(true);
  });

  it('INVALID_ARGUMENT for a provider name that could escape the socket directory', async () => {
    const f = await failure(stack.client.publish(stack.request(stack.targetPath('slash'), 'slash', 'slash')));
    expect(f.code).to.equal('INVALID_ARGUMENT');
    expect(f.message).to.include('provider name "../evil" is invalid');
  });

  describe('provider responses that are rejected whole', () => {
    const longPath = Array(16).fill('a'.repeat(255)).join('/'); // 4,095 bytes: within the 4,096-byte rule, too long under any target
    const bad: [string, () => ReturnType<typeof responseWith>, RegExp, string?][] = [
      ['an absolute path', () => responseWith([{ path: '/etc/passwd' }]), /path is absolute/],
      ['a ".." element', () => responseWith([{ path: 'a/../../b' }]), /has a "\.\." element/],
      ['"..data"', () => responseWith([{ path: '..data' }]), /starts with "\.\."/],
      ['a .metadata path', () => responseWith([{ path: '.metadata/x' }]), /reserved \.metadata/],
      [
        'a duplicate path',
        () => responseWith([{ path: 'a' }, { path: 'a' }], [{ id: 'a', version: '1' }]),
        /more than once/,
      ],
      ['a non-clean path a//b', () => responseWith([{ path: 'a//b' }]), /not clean/],
      ['a non-clean path ./a', () => responseWith([{ path: './a' }]), /not clean/],
      [
        'an error code',
        () => ({ ...responseWith([{ path: 'a' }]), error: { code: 'VaultUnreachable' } }),
        /error code "VaultUnreachable"/,
        'FAILED_PRECONDITION',
      ],
      [
        'a path 2,000 levels deep (within 4096 bytes)',
        () => responseWith([{ path: Array(2000).fill('a').join('/') }]),
        /path is nested deeper than 128 levels/,
      ],
      [
        'a path too long on disk under the target',
        () => responseWith([{ path: longPath }]),
        /path would be \d+ bytes long on disk \(target path, payload directory and path\), more than 4095/,
      ],
      ['no object versions', () => responseWith([{ path: 'a' }], []), /no object versions/],
    ];
    for (const [name, response, message, code] of bad) {
      it(`rejects ${name} and leaves no partial content`, async () => {
        provider.script = async () => response();
        const target = stack.targetPath('bad');
        const f = await failure(stack.client.publish(stack.request(target, 'scripted', 'bad')));
        expect(f.code).to.equal(code ?? 'INVALID_ARGUMENT');
        expect(f.message).to.match(message);
        expect(await gone(target)).to.equal(true);
        expect(await mountsUnder(target)).to.deep.equal([]);
      });
    }
  });

  it('RESOURCE_EXHAUSTED for a response over --max-call-recv-msg-size', async () => {
    provider.script = async () => responseWith([{ path: 'big', contents: 'x'.repeat(100_000) }]);
    const target = stack.targetPath('big');
    const f = await failure(stack.client.publish(stack.request(target, 'scripted', 'big')));
    expect(f.code).to.equal('RESOURCE_EXHAUSTED');
    expect(f.message).to.include('65536 bytes');
    expect(await gone(target)).to.equal(true);
  });

  it('DEADLINE_EXCEEDED for a provider that hangs, and ABORTED for a concurrent publish of the same target', async () => {
    let release!: () => void;
    const hung = new Promise<void>((resolve) => {
      release = resolve;
    });
    provider.script = async () => {
      await hung;
      return responseWith([{ path: 'x' }]);
    };
    const target = stack.targetPath('hang');
    const first = failure(stack.client.publish(stack.request(target, 'scripted', 'hang')));
    while (provider.requests.length === 0 || provider.requests.at(-1)?.target_path !== target)
      await new Promise((r) => setImmediate(r));
    const second = await failure(stack.client.publish(stack.request(target, 'scripted', 'hang')));
    expect(second.code).to.equal('ABORTED');
    const f = await first;
    release();
    expect(f.code).to.equal('DEADLINE_EXCEEDED');
    expect(await gone(target)).to.equal(true);
  });

  it('a failed republish keeps serving the old content', async () => {
    provider.script = async () => responseWith([{ path: 'x', contents: 'good' }]);
    const target = stack.targetPath('keep');
    await stack.client.publish(stack.request(target, 'scripted', 'keep'));
    provider.script = async () => responseWith([{ path: '../escape' }]);
    expect((await failure(stack.client.publish(stack.request(target, 'scripted', 'keep')))).code).to.equal(
      'INVALID_ARGUMENT',
    );
    expect(await readFile(join(target, 'x'), 'utf8')).to.equal('good');
    // A path 2,000 levels deep used to overflow the stack and poison the volume: every
    // later write failed INTERNAL and left another payload directory behind.
    provider.script = async () => responseWith([{ path: Array(2000).fill('d').join('/') }]);
    for (let i = 0; i < 2; i++) {
      const f = await failure(stack.client.publish(stack.request(target, 'scripted', 'keep')));
      expect([f.code, f.message]).to.satisfy(
        ([code, message]: string[]) =>
          code === 'INVALID_ARGUMENT' && message?.includes('nested deeper than 128 levels'),
      );
    }
    expect((await readdir(target)).filter(isPayloadDirName)).to.have.length(1);
    provider.script = async () => responseWith([{ path: 'x', contents: 'better' }]);
    await stack.client.publish(stack.request(target, 'scripted', 'keep'));
    expect(await readFile(join(target, 'x'), 'utf8')).to.equal('better');
    await stack.client.unpublish('vol-keep', target);
  });

  it('FAILED_PRECONDITION when the target path is a file or a symlink', async () => {
    const file = stack.targetPath('file');
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, 'not a dir');
    expect(await failure(stack.client.publish(stack.request(file, 'scripted', 'file')))).to.include({
      code: 'FAILED_PRECONDITION',
    });
    expect(await readFile(file, 'utf8')).to.equal('not a dir');
    const link = stack.targetPath('link');
    await mkdir(join(link, '..'), { recursive: true });
    await symlink(stack.work, link);
    const f = await failure(stack.client.publish(stack.request(link, 'scripted', 'link')));
    expect(f).to.deep.equal({ code: 'FAILED_PRECONDITION', message: f.message });
    expect(f.message).to.include('is a symlink');
  });

  it('NodeUnpublishVolume validates with upstream messages', async () => {
    expect(await failure(stack.client.unpublish('', '/x'))).to.deep.equal({
      code: 'INVALID_ARGUMENT',
      message: 'Volume ID missing in request',
    });
    expect(await failure(stack.client.unpublish('v', ''))).to.deep.equal({
      code: 'INVALID_ARGUMENT',
      message: 'Target path missing in request',
    });
  });

  // Declared last: mocha runs nested suites after the parent's own tests.
  describe('metrics', () => {
    it('records failures in node_publish_error_total with the error type', async () => {
      const text = await stack.metrics();
      expect(text).to.match(
        /^node_publish_error_total\{provider="scripted",error_type="InvalidProviderResponse",os_type="linux"\} \d+$/m,
      );
      expect(text).to.match(/^node_publish_error_total\{provider="",error_type="InvalidRequest",os_type="linux"\} 5$/m);
      expect(text).to.match(
        /^node_publish_error_total\{provider="not-running",error_type="ProviderNotFound",os_type="linux"\} 1$/m,
      );
      expect(text).to.match(
        /^node_publish_error_total\{provider="dead",error_type="ProviderUnavailable",os_type="linux"\} 1$/m,
      );
      expect(text).to.match(
        /^node_publish_error_total\{provider="scripted",error_type="ProviderTimeout",os_type="linux"\} 1$/m,
      );
      expect(text).to.match(
        /^node_publish_error_total\{provider="",error_type="OperationInProgress",os_type="linux"\} 1$/m,
      );
      // A class naming an unusable provider never puts its text into a label.
      expect(text).to.match(
        /^node_publish_error_total\{provider="invalid",error_type="InvalidProviderName",os_type="linux"\} 1$/m,
      );
      // A provider's error code is the metric reason.
      expect(text).to.match(
        /^node_publish_error_total\{provider="scripted",error_type="VaultUnreachable",os_type="linux"\} 1$/m,
      );
    });
  });
});
