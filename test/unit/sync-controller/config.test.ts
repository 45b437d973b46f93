import { expect } from 'chai';
import { parseAudiences, parseSyncControllerConfig } from '../../../sync-controller/config.js';

describe('sync-controller config', () => {
  it("defaults: upstream's", () => {
    const c = parseSyncControllerConfig([], {});
    expect(c).to.include({
      providerDir: '/provider',
      metricsAddr: ':8085',
      healthProbeAddr: ':8081',
      rotationPollIntervalMs: 12 * 3600_000,
      maxCallRecvMsgSize: 4 * 1024 * 1024,
    });
    expect(c.audiences).to.deep.equal([]);
  });

  const audiences: [string, string[]][] = [
    ['', []],
    ['a', ['a']],
    ['a, b', ['a', 'b']],
    [' a ,,b,', ['a', 'b']],
  ];
  for (const [raw, expected] of audiences)
    it(`audiences ${JSON.stringify(raw)}`, () => expect(parseAudiences(raw)).to.deep.equal(expected));

  it('--rotation-poll-interval=0 turns polling off; a bad duration names the flag', () => {
    expect(parseSyncControllerConfig(['--rotation-poll-interval=0'], {}).rotationPollIntervalMs).to.equal(0);
    expect(() => parseSyncControllerConfig(['--rotation-poll-interval=soon'], {})).to.throw(/--rotation-poll-interval/);
  });

  it("leader election: off by default; on, client-go's timings and SSC's Lease name", () => {
    expect(parseSyncControllerConfig([], {}).leaderElection).to.equal(undefined);
    expect(parseSyncControllerConfig(['--leader-elect=false'], {}).leaderElection).to.equal(undefined);
    expect(parseSyncControllerConfig(['--leader-elect'], {}).leaderElection).to.deep.equal({
      namespace: '',
      leaseName: '29f1d54e.secret-sync.x-k8s.io',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    const c = parseSyncControllerConfig(
      [
        '--leader-elect=true',
        '--leader-election-namespace=ops',
        '--leader-elect-resource-name=mine',
        '--leader-elect-lease-duration=4s',
        '--leader-elect-renew-deadline=3s',
        '--leader-elect-retry-period=500ms',
      ],
      {},
    );
    expect(c.leaderElection).to.deep.equal({
      namespace: 'ops',
      leaseName: 'mine',
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
    });
  });

  it('--share-provider-mounts: on by default, off with =false', () => {
    expect(parseSyncControllerConfig([], {}).shareProviderMounts).to.equal(true);
    expect(parseSyncControllerConfig(['--share-provider-mounts=false'], {}).shareProviderMounts).to.equal(false);
  });

  const badElection: [string[], RegExp][] = [
    [['--leader-elect-lease-duration=10s'], /lease-duration must be greater than --leader-elect-renew-deadline/],
    [['--leader-elect-retry-period=9s'], /renew-deadline must be greater than 1.2 × --leader-elect-retry-period/],
    [['--leader-elect-lease-duration=15500ms'], /lease-duration must be whole seconds/],
    [['--leader-elect-retry-period=0'], /--leader-elect-retry-period must be greater than zero/],
    [['--leader-elect-renew-deadline=soon'], /--leader-elect-renew-deadline/],
    [['--leader-election-namespace=Ops'], /--leader-election-namespace "Ops" must be a DNS-1123 label/],
    [['--leader-elect-resource-name=a/b'], /--leader-elect-resource-name "a\/b" must be a DNS-1123 subdomain/],
  ];
  for (const [args, message] of badElection)
    it(`refuses ${args.join(' ')}`, () =>
      expect(() => parseSyncControllerConfig(['--leader-elect', ...args], {})).to.throw(message));

  it("the controller pod from upstream's downward-API variables", () => {
    const c = parseSyncControllerConfig([], { SYNC_CONTROLLER_POD_NAME: 'p', SYNC_CONTROLLER_POD_UID: 'u' });
    expect(c).to.include({ podName: 'p', podUid: 'u' });
  });
});
