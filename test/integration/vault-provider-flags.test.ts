import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { CLI_PATH, startCli, type Child } from '../../bin/child-process.js';

// HashiCorp's DaemonSet arguments: deployment/vault-csi-provider.yaml (v1.7.4) passes
// `-endpoint=… -log-level=info`; the vault-helm chart (v0.34.1) passes `--endpoint=…`,
// `--log-level=<csi.logLevel>` (debug when csi.debug) and `--hmac-secret-name=…`; older
// charts and the README's deprecated form pass `--debug` / `-debug=true`.
describe("vault provider with HashiCorp's DaemonSet arguments (real process)", function () {
  this.timeout(60_000);
  let work: string;
  let child: Child | undefined;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'ssc-vault-flags-'));
  });
  afterEach(async () => {
    await child?.stop();
    child = undefined;
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  const endpoint = () => join(work, 'vault.sock');
  const start = async (args: string[]) => {
    child = await startCli(['provider', 'vault', ...args], /provider started/, {
      env: { PATH: process.env['PATH'], HOME: work },
    });
    return child;
  };

  it("starts with the manifest's -endpoint and -log-level=info", async () => {
    const c = await start([`-endpoint=${endpoint()}`, '-log-level=info']);
    expect(c.stderr()).to.include('"logLevel":"info"');
  });

  it("starts with the Helm chart's arguments, warning that --hmac-secret-name is ignored", async () => {
    const c = await start([
      `--endpoint=${endpoint()}`,
      '--log-level=debug',
      '--hmac-secret-name=vault-csi-provider-hmac-key',
    ]);
    expect(c.stderr()).to.match(/"flag":"--hmac-secret-name".*"message":"ignoring a flag kept for compatibility"/);
  });

  for (const args of [['--debug'], ['-debug=true'], ['--log-level=trace']]) {
    it(`starts with ${args.join(' ')} and logs at debug level`, async () => {
      const c = await start([`--endpoint=${endpoint()}`, ...args]);
      expect(c.stderr()).to.include('"logLevel":"debug"');
    });
  }

  it('--version prints its name and version as JSON and exits', () => {
    const out = execFileSync(process.execPath, [CLI_PATH, 'provider', 'vault', '--version', '--output=json'], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).to.have.keys('name', 'version');
  });
});
