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

  it('refuses --leader-elect=true (not implemented yet) rather than ignoring it', () => {
    expect(() => parseSyncControllerConfig(['--leader-elect'], {})).to.throw(/--leader-elect is not implemented yet/);
    expect(parseSyncControllerConfig(['--leader-elect=false'], {}).providerDir).to.equal('/provider');
  });

  it('--share-provider-mounts: on by default, off with =false', () => {
    expect(parseSyncControllerConfig([], {}).shareProviderMounts).to.equal(true);
    expect(parseSyncControllerConfig(['--share-provider-mounts=false'], {}).shareProviderMounts).to.equal(false);
  });

  it("the controller pod from upstream's downward-API variables", () => {
    const c = parseSyncControllerConfig([], { SYNC_CONTROLLER_POD_NAME: 'p', SYNC_CONTROLLER_POD_UID: 'u' });
    expect(c).to.include({ podName: 'p', podUid: 'u' });
  });
});
