import { expect } from 'chai';
import {
  leaseStep,
  leaseTimingProblem,
  microTime,
  releasedLease,
  type LeaseObservation,
  type LeaseSpec,
} from '../../../../driver/k8s/lease-record.js';

const T0 = new Date('2026-11-29T03:00:00.123Z');
const NOW = microTime(T0);
const me = 'pod-a_1';

function attempt(current: LeaseSpec | undefined, seen: LeaseObservation | undefined, monotonicMs: number) {
  return leaseStep(current, seen, { identity: me, leaseDurationSeconds: 15, monotonicMs, wallClock: T0 });
}

describe('Lease decisions (client-go semantics)', () => {
  it("MicroTime: RFC 3339 UTC with six fractional digits, as Go's metav1.MicroTime", () => {
    expect(microTime(T0)).to.equal('2026-11-29T03:00:00.123000Z');
  });

  it('no Lease: create it, held by this replica, no transitions yet', () => {
    const step = attempt(undefined, undefined, 100);
    expect(step.action).to.equal('write');
    expect(step.action === 'write' && step.spec).to.deep.equal({
      holderIdentity: me,
      leaseDurationSeconds: 15,
      acquireTime: NOW,
      renewTime: NOW,
      leaseTransitions: 0,
    });
  });

  const other: LeaseSpec = {
    holderIdentity: 'pod-b_2',
    leaseDurationSeconds: 15,
    acquireTime: '2026-11-29T02:00:00.000000Z',
    renewTime: '2026-11-29T02:59:59.000000Z',
    leaseTransitions: 3,
  };

  // [case, current, seen at (monotonic ms, or none), now (monotonic ms), expected action, expected transitions]
  const table: [string, LeaseSpec, number | undefined, number, 'write' | 'held', number | undefined][] = [
    ["another's, first seen now: wait a whole lease duration from now", other, undefined, 1_000_000, 'held', undefined],
    ["another's, unchanged for less than its duration", other, 0, 14_999, 'held', undefined],
    ["another's, unchanged for its whole duration: expired, taken over", other, 0, 15_000, 'write', 4],
    [
      'released (no holder): taken at once',
      { ...other, holderIdentity: '', leaseDurationSeconds: 1 },
      0,
      1,
      'write',
      4,
    ],
    ['ours: renewed, acquireTime and transitions kept', { ...other, holderIdentity: me }, 0, 1, 'write', 3],
  ];
  for (const [name, current, seenAt, now, action, transitions] of table)
    it(name, () => {
      const seen = seenAt === undefined ? undefined : attempt(current, undefined, seenAt).observation;
      const step = attempt(current, seen, now);
      expect(step.action).to.equal(action);
      if (step.action === 'write') {
        expect(step.spec.holderIdentity).to.equal(me);
        expect(step.spec.leaseTransitions).to.equal(transitions);
        expect(step.spec.renewTime).to.equal(NOW);
        expect(step.spec.acquireTime).to.equal(current.holderIdentity === me ? current.acquireTime : NOW);
      } else expect(step.holder).to.equal('pod-b_2');
    });

  it('a renewal seen by a follower restarts its wait: expiry counts from the last change it saw, not renewTime', () => {
    const first = attempt(other, undefined, 0);
    const renewed = { ...other, renewTime: '2026-11-29T03:00:10.000000Z' };
    const second = attempt(renewed, first.observation, 10_000);
    expect(second.action).to.equal('held');
    expect(second.observation.atMs).to.equal(10_000);
    expect(attempt(renewed, second.observation, 24_999).action).to.equal('held');
    expect(attempt(renewed, second.observation, 25_000).action).to.equal('write');
  });

  it("the released Lease: no holder, one second, transitions kept (client-go's ReleaseOnCancel)", () => {
    expect(releasedLease({ ...other, holderIdentity: me }, T0)).to.deep.equal({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: NOW,
      renewTime: NOW,
      leaseTransitions: 3,
    });
  });

  const timings: [number, number, number, string | undefined][] = [
    [15_000, 10_000, 2_000, undefined],
    [10_000, 10_000, 2_000, 'lease-duration must be greater'],
    [15_000, 2_400, 2_000, 'renew-deadline must be greater than 1.2'],
    [15_500, 10_000, 2_000, 'whole seconds'],
  ];
  for (const [lease, renew, retry, problem] of timings)
    it(`timings ${lease}/${renew}/${retry} ms: ${problem ?? 'fine'}`, () => {
      const got = leaseTimingProblem(lease, renew, retry);
      if (problem === undefined) expect(got).to.equal(undefined);
      else expect(got).to.include(problem);
    });
});
