import { expect } from 'chai';
import { parseDriverConfig, versionRequested } from '../../../driver/config.js';

const NODE = ['--nodeid=node-1'];

describe('parseDriverConfig', () => {
  it('applies the documented defaults', () => {
    const c = parseDriverConfig(NODE, {});
    expect(c).to.deep.equal({
      socketPath: '/csi/csi.sock',
      nodeId: 'node-1',
      driverName: 'secrets-store.csi.k8s.io',
      providerDirs: ['/etc/kubernetes/secrets-store-csi-providers', '/var/run/secrets-store-csi-providers'],
      maxCallRecvMsgSize: 4194304,
      maxObjectsPerVolume: 10000,
      metricsAddr: ':8095',
      enableSecretRotation: false,
      rotationPollIntervalMs: 120_000,
      rotationMode: 'auto',
      workloadRestartMinIntervalMs: 600_000,
      spcDir: '',
      kubeconfig: '',
      enableSecretSync: true,
      secretResyncIntervalMs: 300_000,
      mountMode: 'tmpfs',
      providerTimeoutMs: 30_000,
      logLevel: 'info',
      ignoredFlags: [],
    });
  });

  it('is frozen, including its lists', () => {
    const c = parseDriverConfig(NODE, {});
    expect(Object.isFrozen(c)).to.equal(true);
    expect(Object.isFrozen(c.providerDirs)).to.equal(true);
    expect(Object.isFrozen(c.ignoredFlags)).to.equal(true);
    expect(() => {
      (c as { nodeId: string }).nodeId = 'x';
    }).to.throw(TypeError);
  });

  it('takes the node id from KUBE_NODE_NAME when --nodeid is absent, the flag wins otherwise', () => {
    expect(parseDriverConfig([], { KUBE_NODE_NAME: 'env-node' }).nodeId).to.equal('env-node');
    expect(parseDriverConfig(['--nodeid', 'flag-node'], { KUBE_NODE_NAME: 'env-node' }).nodeId).to.equal('flag-node');
  });

  it('parses upstream-style flags', () => {
    const c = parseDriverConfig(
      [
        '--endpoint=unix:///var/lib/kubelet/plugins/csi-secrets-store/csi.sock',
        '-nodeid=n',
        '--drivername',
        'my.csi',
        '--provider-volume=/p',
        '--additional-provider-volume-paths=/a, /b,',
        '--max-call-recv-msg-size=100',
        '--metrics-addr=',
        '--enable-secret-rotation',
        '--rotation-poll-interval=1h30m',
        '--provider-timeout=5s',
        '--log-level=debug',
        '--spc-dir=/spc',
        '--mount-mode=dir',
      ],
      {},
    );
    expect(c).to.deep.include({
      socketPath: '/var/lib/kubelet/plugins/csi-secrets-store/csi.sock',
      nodeId: 'n',
      driverName: 'my.csi',
      providerDirs: ['/a', '/b', '/p'],
      maxCallRecvMsgSize: 100,
      metricsAddr: '',
      enableSecretRotation: true,
      rotationPollIntervalMs: 5_400_000,
      providerTimeoutMs: 5000,
      logLevel: 'debug',
      spcDir: '/spc',
      mountMode: 'dir',
    });
  });

  it('syncs Secrets by default, as upstream; --enable-secret-sync=false turns it off', () => {
    expect(parseDriverConfig(NODE, {}).enableSecretSync).to.equal(true);
    expect(parseDriverConfig([...NODE, '--enable-secret-sync=false'], {}).enableSecretSync).to.equal(false);
    expect(parseDriverConfig([...NODE, '--enable-secret-sync'], {}).enableSecretSync).to.equal(true);
  });

  it('parses --secret-resync-interval (default 5m, minimum 1s)', () => {
    expect(parseDriverConfig([...NODE, '--secret-resync-interval=2s'], {}).secretResyncIntervalMs).to.equal(2000);
    expect(() => parseDriverConfig([...NODE, '--secret-resync-interval=500ms'], {})).to.throw(
      '--secret-resync-interval must be at least 1s',
    );
    expect(() => parseDriverConfig([...NODE, '--secret-resync-interval=soon'], {})).to.throw(
      /--secret-resync-interval: .*Go duration/,
    );
  });

  it('parses --max-objects-per-volume (default 10000)', () => {
    expect(parseDriverConfig([...NODE], {}).maxObjectsPerVolume).to.equal(10000);
    expect(parseDriverConfig([...NODE, '--max-objects-per-volume=50'], {}).maxObjectsPerVolume).to.equal(50);
    expect(() => parseDriverConfig([...NODE, '--max-objects-per-volume=0'], {})).to.throw(
      '--max-objects-per-volume must be a positive integer, got "0"',
    );
  });

  it('parses --workload-restart-min-interval as a Go duration of at least 1s', () => {
    expect(
      parseDriverConfig([...NODE, '--workload-restart-min-interval=1h30m'], {}).workloadRestartMinIntervalMs,
    ).to.equal(5_400_000);
    expect(
      parseDriverConfig([...NODE, '--workload-restart-min-interval', '1s'], {}).workloadRestartMinIntervalMs,
    ).to.equal(1000);
  });

  it('parses --rotation-mode: auto (default), reconciler or republish', () => {
    expect(parseDriverConfig([...NODE], {}).rotationMode).to.equal('auto');
    expect(parseDriverConfig([...NODE, '--rotation-mode=republish'], {}).rotationMode).to.equal('republish');
    expect(parseDriverConfig([...NODE, '--rotation-mode', 'reconciler'], {}).rotationMode).to.equal('reconciler');
  });

  it('accepts the minimum rotation interval of 1s', () => {
    expect(parseDriverConfig([...NODE, '--rotation-poll-interval=1s'], {}).rotationPollIntervalMs).to.equal(1000);
  });

  it('accepts ignored upstream flags and reports each once; honours -v and --log-format-json', () => {
    const c = parseDriverConfig(
      [
        ...NODE,
        '--provider-health-check',
        '--provider-health-check-interval=2m',
        '-v=5',
        '--log-format-json=true',
        '-logtostderr',
        '--provider-health-check=false',
      ],
      {},
    );
    expect(c.ignoredFlags).to.deep.equal(['provider-health-check', 'provider-health-check-interval', 'logtostderr']);
    expect(c.logLevel).to.equal('debug');
  });

  const verbosity: [string[], string][] = [
    [['-v=5'], 'debug'],
    [['--v', '4'], 'debug'],
    [['-v=3'], 'info'],
    [['-v=0'], 'info'],
    [['-v=-1'], 'info'],
    [['-v=5', '--log-level=warn'], 'warn'],
    [['--log-level=info', '-v', '9'], 'info'],
    [['--log-level=error'], 'error'],
  ];
  for (const [args, level] of verbosity) {
    it(`maps ${args.join(' ')} to log level ${level} (-v of 4 or more is debug unless --log-level is given)`, () => {
      expect(parseDriverConfig([...NODE, ...args], {}).logLevel).to.equal(level);
    });
  }

  it('warns about --log-format-json=false (logs are always JSON) and accepts the Prometheus metrics backend in any case', () => {
    expect(parseDriverConfig([...NODE, '--log-format-json=false'], {}).ignoredFlags).to.deep.equal(['log-format-json']);
    expect(
      parseDriverConfig([...NODE, '--metrics-backend=prometheus', '-metrics-backend', 'Prometheus'], {}).ignoredFlags,
    ).to.deep.equal([]);
  });

  it('reads -version as upstream: any Go spelling, after every flag parsed', () => {
    for (const args of [['-version'], ['--version'], ['-version=true'], ['--version=1', '--nodeid=x']])
      expect(versionRequested(args), args.join(' ')).to.equal(true);
    for (const args of [[], ['--version=false'], ['-v=5']])
      expect(versionRequested(args), args.join(' ')).to.equal(false);
    expect(() => versionRequested(['-version', '--no-such-flag'])).to.throw('unknown flag --no-such-flag');
  });

  const invalid: [string, string[], Record<string, string>, string][] = [
    [
      'rotation 0s',
      [...NODE, '--rotation-poll-interval=0s'],
      {},
      '--rotation-poll-interval must be greater than zero, got "0s"',
    ],
    [
      'rotation -1m',
      [...NODE, '--rotation-poll-interval=-1m'],
      {},
      '--rotation-poll-interval must be greater than zero, got "-1m"',
    ],
    [
      'rotation 500ms',
      [...NODE, '--rotation-poll-interval=500ms'],
      {},
      '--rotation-poll-interval must be at least 1s, got "500ms"',
    ],
    [
      'rotation abc',
      [...NODE, '--rotation-poll-interval=abc'],
      {},
      '--rotation-poll-interval: invalid duration "abc" (use Go duration syntax such as 2m or 1h30m)',
    ],
    [
      'rotation 1x',
      [...NODE, '--rotation-poll-interval=1x'],
      {},
      '--rotation-poll-interval: unknown unit "x" in duration "1x" (use Go duration syntax such as 2m or 1h30m)',
    ],
    [
      'restart spacing 0',
      [...NODE, '--workload-restart-min-interval=0'],
      {},
      '--workload-restart-min-interval must be greater than zero, got "0"',
    ],
    [
      'restart spacing 500ms',
      [...NODE, '--workload-restart-min-interval=500ms'],
      {},
      '--workload-restart-min-interval must be at least 1s, got "500ms"',
    ],
    [
      'restart spacing 10',
      [...NODE, '--workload-restart-min-interval=10'],
      {},
      '--workload-restart-min-interval: missing unit in duration "10" (use Go duration syntax such as 2m or 1h30m)',
    ],
    [
      'provider timeout 0',
      [...NODE, '--provider-timeout=0'],
      {},
      '--provider-timeout must be greater than zero, got "0"',
    ],
    [
      'dir mode without --spc-dir',
      [...NODE, '--mount-mode=dir'],
      {},
      '--mount-mode=dir is for local mode only: set --spc-dir as well',
    ],
    [
      'bad rotation mode',
      [...NODE, '--rotation-mode=kubelet'],
      {},
      '--rotation-mode must be auto, reconciler or republish, got "kubelet"',
    ],
    ['bad mount mode', [...NODE, '--mount-mode=bind'], {}, '--mount-mode must be tmpfs or dir, got "bind"'],
    ['missing node id', [], {}, '--nodeid is required (or set KUBE_NODE_NAME)'],
    ['empty KUBE_NODE_NAME', [], { KUBE_NODE_NAME: '' }, '--nodeid is required (or set KUBE_NODE_NAME)'],
    [
      'zero max recv size',
      [...NODE, '--max-call-recv-msg-size=0'],
      {},
      '--max-call-recv-msg-size must be a positive integer, got "0"',
    ],
    [
      'non-integer max recv size',
      [...NODE, '--max-call-recv-msg-size=4MiB'],
      {},
      '--max-call-recv-msg-size must be a positive integer, got "4MiB"',
    ],
    [
      'no provider dirs',
      [...NODE, '--provider-volume=', '--additional-provider-volume-paths=,'],
      {},
      '--provider-volume must not be empty',
    ],
    ['tcp endpoint', [...NODE, '--endpoint=tcp://0.0.0.0:1'], {}, 'must be a unix socket'],
    ['bad log level', [...NODE, '--log-level=trace'], {}, '--log-level must be one of'],
    ['unknown flag', [...NODE, '--no-such-flag'], {}, 'unknown flag --no-such-flag'],
    ['-v not an integer', [...NODE, '-v=high'], {}, '-v must be an integer (klog verbosity), got "high"'],
    ['-v beyond 32 bits', [...NODE, '-v=2147483648'], {}, '-v must be an integer (klog verbosity), got "2147483648"'],
    [
      'another metrics backend',
      [...NODE, '--metrics-backend=stackdriver'],
      {},
      '--metrics-backend: unsupported metrics backend "stackdriver" (only Prometheus, as upstream)',
    ],
    ['positional', [...NODE, 'extra'], {}, 'unexpected argument "extra"'],
  ];
  for (const [name, argv, env, message] of invalid) {
    it(`rejects ${name}`, () => {
      let caught: unknown;
      try {
        parseDriverConfig(argv, env);
      } catch (err) {
        caught = err;
      }
      expect(caught, 'expected an error').to.be.instanceOf(Error);
      expect((caught as Error).message).to.include(message);
    });
  }

  it('explains Go duration syntax for unparsable rotation intervals', () => {
    expect(() => parseDriverConfig([...NODE, '--rotation-poll-interval=1x'], {})).to.throw(
      '--rotation-poll-interval: unknown unit "x" in duration "1x" (use Go duration syntax such as 2m or 1h30m)',
    );
  });
});
