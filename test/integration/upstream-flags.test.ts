import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { DRIVER_FLAGS, parseDriverConfig } from '../../driver/config.js';
import { packageVersion } from '../../lib/version.js';
import { runCli, spawnCli } from '../support/cli-run.js';
import { fileClass } from '../support/driver-stack.js';
import { peerBinary, requirePeer } from '../support/peers.js';

// Every flag upstream's driver v1.6.1 accepts starts ours. The list is read from upstream's
// module by the upstream-driver-facts peer (main.go's flag declarations, and what the
// packages it links register on Go's flag set: klog.InitFlags, --metrics-backend,
// controller-runtime's --kubeconfig), never typed in here.

interface UpstreamFlag {
  readonly name: string;
  readonly bool: boolean;
  readonly kind: string;
  readonly default: string;
  readonly literal: boolean;
  readonly source: string;
}

/** A value the flag takes: upstream's default where it is a literal, else one of its type. */
function sample(flag: UpstreamFlag): string {
  if (flag.literal) return flag.default;
  if (flag.kind === 'duration') return '90s';
  if (flag.kind === 'int') return '4194304';
  throw new Error(`no sample value for ${flag.name} (${flag.kind})`);
}

/** Every way Go's flag package accepts the flag on a command line. */
function spellings(flag: UpstreamFlag): string[][] {
  if (flag.bool)
    return ['-', '--'].flatMap((d) => [[`${d}${flag.name}`], [`${d}${flag.name}=true`], [`${d}${flag.name}=false`]]);
  const value = sample(flag);
  return ['-', '--'].flatMap((d) => [[`${d}${flag.name}=${value}`], [`${d}${flag.name}`, value]]);
}

describe('upstream v1.6.1 flags start our driver (list from the upstream-driver-facts peer)', function () {
  this.timeout(120_000);
  let flags: UpstreamFlag[] = [];
  let work: string;

  before(() => {
    flags = (JSON.parse(readFileSync(requirePeer('UPSTREAM_DRIVER_FLAGS'), 'utf8')) as { flags: UpstreamFlag[] }).flags;
    work = mkdtempSync(join(tmpdir(), 'ssc-upstream-flags-'));
    mkdirSync(join(work, 'spc'));
    mkdirSync(join(work, 'providers'));
    writeFileSync(join(work, 'spc', 'app.yaml'), fileClass('app', [{ objectName: 'a' }]));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("reads a complete list: main.go's flags, klog's and the linked packages'", () => {
    const names = flags.map((f) => f.name);
    expect(names).to.include.members([
      'endpoint',
      'nodeid',
      'version',
      'log-format-json',
      'enable-pprof',
      'pprof-port',
      'provider-health-check',
      'provider-health-check-interval',
      'metrics-backend',
      'kubeconfig',
      'v',
      'vmodule',
      'logtostderr',
      'alsologtostderr',
      'stderrthreshold',
      'add_dir_header',
      'skip_headers',
      'log_dir',
      'log_file',
      'log_file_max_size',
      'one_output',
      'skip_log_headers',
    ]);
    expect(flags.filter((f) => f.source === 'main.go')).to.have.length.greaterThan(10);
  });

  it("declares each upstream flag with upstream's type (a boolean never takes the next argument)", () => {
    const wrong = flags.filter(
      (f) => DRIVER_FLAGS[f.name] === undefined || (DRIVER_FLAGS[f.name]?.type === 'boolean') !== f.bool,
    );
    expect(wrong.map((f) => `${f.name} (upstream ${f.bool ? 'boolean' : f.kind})`)).to.deep.equal([]);
  });

  it('parses every flag in every Go spelling', () => {
    const problems: string[] = [];
    for (const flag of flags) {
      for (const args of spellings(flag)) {
        try {
          // KUBE_NODE_NAME as upstream's DaemonSet sets it: an empty --nodeid falls back to it.
          parseDriverConfig(args, { KUBE_NODE_NAME: 'n' });
        } catch (err) {
          problems.push(`${args.join(' ')}: ${(err as Error).message}`);
        }
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it('starts with all of them at once, warning once for each ignored flag', async () => {
    const upstreamArgs = flags
      .filter((f) => f.name !== 'version')
      .flatMap((f) => (f.bool ? [`-${f.name}`] : [`--${f.name}`, sample(f)]));
    // Then ours for a local-mode run in a temp dir (the last value of a flag wins).
    const run = spawnCli([
      'driver',
      ...upstreamArgs,
      '-v=5',
      '--nodeid=n',
      `--endpoint=unix://${join(work, 'csi.sock')}`,
      `--provider-volume=${join(work, 'providers')}`,
      '--additional-provider-volume-paths=',
      `--spc-dir=${join(work, 'spc')}`,
      '--mount-mode=dir',
      '--metrics-addr=127.0.0.1:0',
      '--provider-health-check',
    ]);
    try {
      await run.until('stderr', /"message":"driver started"/);
    } finally {
      run.process.kill('SIGTERM');
    }
    expect(await run.exited).to.equal(0);
    const lines = run
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const warned = lines.filter((l) => l['message'] === 'ignoring upstream flag').map((l) => l['flag']);
    const ignored = Object.entries(DRIVER_FLAGS)
      .filter(([, spec]) => spec.ignored)
      .map(([name]) => name);
    expect(warned).to.have.members(flags.map((f) => f.name).filter((n) => ignored.includes(n)));
    expect(new Set(warned).size).to.equal(warned.length);
    expect(
      lines.some((l) => l['level'] === 'debug'),
      '-v=5 selects debug logs',
    ).to.equal(true);
  });

  for (const spelling of ['-version', '--version', '-version=true']) {
    it(`${spelling} prints the version as upstream does and exits 0`, async () => {
      const { code, stdout, stderr } = await runCli(['driver', spelling]);
      expect(code, stderr).to.equal(0);
      expect(JSON.parse(stdout)).to.deep.equal({ BuildVersion: packageVersion(), GitCommit: '', BuildDate: '' });
    });
  }

  it("starts with the args upstream's Helm chart renders (every value that adds one set)", async function () {
    const helm = peerBinary('HELM');
    const chart = peerBinary('UPSTREAM_CHART');
    if (!helm || !chart) this.skip(); // the helm and upstream-chart peers (test/peers/install.sh)
    const rendered = execFileSync(
      helm as string,
      [
        'template',
        'csi',
        chart as string,
        '--kube-version',
        'v1.36.3',
        '--set',
        'logVerbosity=5',
        '--set',
        'logFormatJSON=true',
        '--set',
        'enableSecretRotation=true',
        '--set',
        'rotationPollInterval=3m',
        '--set',
        'providerHealthCheck=true',
        '--set',
        'providerHealthCheckInterval=1m',
        '--set',
        'maxCallRecvMsgSize=8388608',
      ],
      { encoding: 'utf8' },
    );
    type Container = { name: string; args?: string[]; env?: { name: string; value?: string }[] };
    const daemonSet = parseAllDocuments(rendered)
      .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Container[] } } } })
      .find((d) => d?.kind === 'DaemonSet' && d.spec?.template.spec.containers.some((c) => c.name === 'secrets-store'));
    const container = daemonSet?.spec?.template.spec.containers.find((c) => c.name === 'secrets-store') as Container;
    // Kubelet expands $(VAR) from the container's env; this pod's socket lives in the temp dir.
    const env: Record<string, string> = {
      ...Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? ''])),
      CSI_ENDPOINT: `unix://${join(work, 'chart.sock')}`,
      KUBE_NODE_NAME: 'n',
    };
    const args = (container.args ?? []).map((a) =>
      a.replace(/\$\(([A-Z_]+)\)/g, (_m, name: string) => env[name] ?? ''),
    );
    expect(args).to.include.members([
      '-v=5',
      '--log-format-json=true',
      '--enable-secret-rotation=true',
      '--rotation-poll-interval=3m',
      '--provider-health-check=true',
      '--provider-health-check-interval=1m',
      '--max-call-recv-msg-size=8388608',
    ]);
    const config = parseDriverConfig(args, {});
    expect(config).to.include({
      logLevel: 'debug',
      enableSecretRotation: true,
      rotationPollIntervalMs: 180_000,
      maxCallRecvMsgSize: 8388608,
      nodeId: 'n',
    });
    const run = spawnCli([
      'driver',
      ...args,
      `--spc-dir=${join(work, 'spc')}`,
      '--mount-mode=dir',
      '--metrics-addr=127.0.0.1:0',
      `--provider-volume=${join(work, 'providers')}`,
      '--additional-provider-volume-paths=',
    ]);
    try {
      await run.until('stderr', /"message":"driver started"/);
    } finally {
      run.process.kill('SIGTERM');
    }
    expect(await run.exited).to.equal(0);
  });
});
