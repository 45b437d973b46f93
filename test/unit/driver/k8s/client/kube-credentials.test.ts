import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialSource, TOKEN_FILE_TTL_MS, type RunPlugin } from '../../../../../driver/k8s/client/credentials.js';
import type { ExecPlugin } from '../../../../../driver/k8s/client/kubeconfig.js';

const plugin: ExecPlugin = {
  command: 'get-token',
  args: ['--x'],
  env: { REGION: 'eu' },
  apiVersion: 'client.authentication.k8s.io/v1',
  baseDir: '/cfg',
};

/** A scripted credential plugin: prints the next of `outputs`, recording each run's env. */
function scripted(outputs: string[]): { run: RunPlugin; envs: NodeJS.ProcessEnv[] } {
  const envs: NodeJS.ProcessEnv[] = [];
  return {
    envs,
    run: async (_p, env) => {
      envs.push(env);
      const out = outputs.shift();
      if (out === undefined) throw new Error('no more runs');
      return out;
    },
  };
}

const credential = (status: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: plugin.apiVersion, kind: 'ExecCredential', status });

describe('CredentialSource: what each API request authenticates with', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-creds-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('sends a static token as Bearer and basic auth as Basic; neither is renewable', async () => {
    const token = new CredentialSource({ type: 'token', token: 'abc' });
    expect(await token.current()).to.deep.equal({ authorization: 'Bearer abc' });
    expect(token.renewable).to.equal(false);
    expect(await new CredentialSource({ type: 'basic', username: 'u', password: 'p' }).current()).to.deep.equal({
      authorization: `Basic ${Buffer.from('u:p').toString('base64')}`,
    });
    expect(await new CredentialSource({ type: 'none' }).current()).to.deep.equal({});
  });

  it('re-reads a token file after a minute, or at once after invalidate() (a 401)', async () => {
    const path = join(dir, 'token');
    await writeFile(path, 'one\n');
    let now = 0;
    const source = new CredentialSource({ type: 'token-file', path }, () => now);
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer one' });
    await writeFile(path, 'two\n');
    now = TOKEN_FILE_TTL_MS - 1;
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer one' });
    now = TOKEN_FILE_TTL_MS;
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer two' });
    await writeFile(path, 'three\n');
    source.invalidate();
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer three' });
    expect(source.renewable).to.equal(true);
  });

  it('after concurrent 401s, keeps a credential loaded since the refused one (one plugin run, not one per 401)', async () => {
    const plugin2 = scripted([credential({ token: 't1' }), credential({ token: 't2' })]);
    const source = new CredentialSource({ type: 'exec', plugin }, Date.now, plugin2.run);
    const refused = await source.current();
    source.invalidate(refused);
    const renewed = await source.current();
    source.invalidate(refused); // a second request refused with the old token answers later
    expect(await source.current()).to.equal(renewed);
    expect(plugin2.envs).to.have.length(2);
  });

  it('runs an exec plugin with its env and KUBERNETES_EXEC_INFO, once for concurrent requests, again near expiry', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const plugin1 = scripted([
      credential({ token: 't1', expirationTimestamp: '2026-01-01T00:10:00Z' }),
      credential({ token: 't2' }),
    ]);
    const source = new CredentialSource({ type: 'exec', plugin }, () => now, plugin1.run, { PATH: '/bin' });
    const [a, b] = await Promise.all([source.current(), source.current()]);
    expect(a).to.deep.equal({ authorization: 'Bearer t1' });
    expect(b).to.equal(a);
    expect(plugin1.envs).to.have.length(1);
    expect(plugin1.envs[0]).to.include({ PATH: '/bin', REGION: 'eu' });
    expect(JSON.parse(plugin1.envs[0]?.['KUBERNETES_EXEC_INFO'] ?? '{}')).to.deep.equal({
      apiVersion: plugin.apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
    now = Date.parse('2026-01-01T00:09:00Z');
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer t1' });
    now = Date.parse('2026-01-01T00:09:31Z');
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer t2' });
    // Without an expiry it is kept until the API refuses it.
    now += 86_400_000;
    expect(await source.current()).to.deep.equal({ authorization: 'Bearer t2' });
    expect(plugin1.envs).to.have.length(2);
  });

  it('takes a client certificate and key from an exec plugin', async () => {
    const source = new CredentialSource(
      { type: 'exec', plugin },
      Date.now,
      scripted([credential({ clientCertificateData: 'CERT', clientKeyData: 'KEY' })]).run,
    );
    const auth = await source.current();
    expect(String(auth.cert)).to.equal('CERT');
    expect(String(auth.key)).to.equal('KEY');
    expect(auth.authorization).to.equal(undefined);
  });

  it('refuses plugin output without a credential, never quoting it', async () => {
    for (const out of [
      'not json sekret',
      credential({ expirationTimestamp: 'x' }),
      JSON.stringify({ kind: 'ExecCredential' }),
    ]) {
      const err = await new CredentialSource({ type: 'exec', plugin }, Date.now, scripted([out]).run).current().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).to.match(
        /^kubeconfig credential plugin get-token (printed no ExecCredential status|returned neither a token nor a client certificate and key)$/,
      );
      expect(err?.message).not.to.include('sekret');
    }
  });

  it('reports a plugin that fails by its exit status only (its output may hold a token)', async () => {
    const failing: ExecPlugin = { ...plugin, command: 'sh', args: ['-c', 'echo sekret; exit 3'] };
    const err = await new CredentialSource({ type: 'exec', plugin: failing }).current().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.equal('kubeconfig credential plugin sh failed (exit status 3)');
  });
});
