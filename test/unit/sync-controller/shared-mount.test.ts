import { expect } from 'chai';
import type { MountResponse__Output } from '../../../proto/gen/v1alpha1/MountResponse.js';
import { syncMountRequest } from '../../../sync-controller/provider-fetch.js';
import {
  mayShare,
  type MountCallState,
  mountRequestKey,
  retainedUntil,
  SharedMounts,
  type SharingPolicy,
} from '../../../sync-controller/shared-mount.js';
import { pollGroupOf } from '../../../sync-controller/poll-groups.js';
import type { SecretSync } from '../../../sync-controller/secret-sync.js';

const POLICY: SharingPolicy = { idleMs: 5, maxAgeMs: 60 };

describe('sync-controller shared Mount: decisions', () => {
  const inFlight = (startedAt: number): MountCallState => ({ startedAt, settledAt: undefined, lastUsedAt: startedAt });
  const settled = (startedAt: number, lastUsedAt: number): MountCallState => ({
    startedAt,
    settledAt: startedAt + 1,
    lastUsedAt,
  });
  const cases: [string, MountCallState, number, number, boolean][] = [
    ['in flight, started after the trigger', inFlight(10), 9, 12, true],
    ['in flight, started at the trigger', inFlight(10), 10, 12, true],
    [
      'in flight, started before the trigger (a spec change, refresh, class change or poll)',
      inFlight(10),
      11,
      12,
      false,
    ],
    ['in flight longer than the most age', inFlight(10), 0, 71, false],
    ['answered, used within the idle time', settled(10, 20), 0, 25, true],
    ['answered, idle longer than the idle time', settled(10, 20), 0, 26, false],
    ['answered, used recently but older than the most age', settled(10, 68), 0, 71, false],
    ['answered, started before the trigger', settled(10, 20), 15, 21, false],
  ];
  for (const [name, call, triggeredAt, now, expected] of cases)
    it(`mayShare: ${name} → ${expected}`, () => expect(mayShare(call, triggeredAt, now, POLICY)).to.equal(expected));

  const retained: [string, MountCallState, number][] = [
    ['idle time after the last use', settled(10, 20), 25],
    ['the most age when that is first', settled(10, 68), 70],
  ];
  for (const [name, call, until] of retained)
    it(`retainedUntil: ${name}`, () => expect(retainedUntil(call, POLICY)).to.equal(until));

  const base = { parameters: { objects: 'x' }, namespace: 'ns', serviceAccount: 'sa', pod: { name: 'p', uid: 'u' } };
  const request = (change: Partial<typeof base> & { tokens?: string } = {}) =>
    syncMountRequest({ ...base, tokens: '{"aud":{"token":"t1"}}', ...change });
  it('mountRequestKey: the same request and provider, the same key; a digest, no token in it', () => {
    const key = mountRequestKey('file', request());
    expect(mountRequestKey('file', request())).to.equal(key);
    expect(key).to.match(/^[0-9a-f]{64}$/);
  });
  const differing: [string, string, ReturnType<typeof request>][] = [
    ['another provider', 'vault', request()],
    ['other class parameters', 'file', request({ parameters: { objects: 'y' } })],
    ['another namespace', 'file', request({ namespace: 'other' })],
    ['another service account', 'file', request({ serviceAccount: 'other' })],
    ['other tokens', 'file', request({ tokens: '{"aud":{"token":"t2"}}' })],
    ['no tokens', 'file', syncMountRequest({ ...base, tokens: undefined })],
  ];
  for (const [name, provider, req] of differing)
    it(`mountRequestKey: ${name} → another key`, () =>
      expect(mountRequestKey(provider, req)).not.to.equal(mountRequestKey('file', request())));

  const ss = (namespace: string, cls: string, sa: string) =>
    ({
      metadata: { namespace, name: 'n' },
      spec: { secretProviderClassName: cls, serviceAccountName: sa, secretObject: { data: [] } },
    }) as SecretSync;
  const groups: [string, SecretSync, boolean][] = [
    ['same namespace, class, SA', ss('a', 'c', 's'), true],
    ['another namespace', ss('b', 'c', 's'), false],
    ['another class', ss('a', 'd', 's'), false],
    ['another SA', ss('a', 'c', 't'), false],
  ];
  for (const [name, other, same] of groups)
    it(`pollGroupOf: ${name} → ${same ? 'same' : 'another'} group`, () =>
      expect(pollGroupOf(other) === pollGroupOf(ss('a', 'c', 's'))).to.equal(same));
});

describe('sync-controller shared Mount: SharedMounts', () => {
  let clock = 0;
  let calls: { resolve: (r: MountResponse__Output) => void; reject: (e: Error) => void }[];
  let shared: number;
  let mounts: SharedMounts;
  const answer = (text: string): MountResponse__Output => ({
    files: [{ path: 'p', contents: Buffer.from(text), mode: 0 }],
    object_version: [],
    error: null,
  });
  const req = syncMountRequest({
    parameters: {},
    namespace: 'ns',
    serviceAccount: 'sa',
    pod: { name: 'p', uid: 'u' },
    tokens: undefined,
  });
  const text = async (p: Promise<MountResponse__Output>) => (await p).files[0]?.contents.toString();

  beforeEach(() => {
    clock = 100;
    calls = [];
    shared = 0;
    mounts = new SharedMounts(
      () => new Promise((resolve, reject) => calls.push({ resolve, reject })),
      () => shared++,
      { idleMs: 5_000, maxAgeMs: 60_000 },
      () => clock,
    );
  });
  afterEach(() => mounts.clear());

  it('one call for reconciles triggered before it started, in flight and after it answered', async () => {
    const first = mounts.mount('file', req, 90);
    const second = mounts.mount('file', req, 95);
    calls[0]?.resolve(answer('v1'));
    expect(await text(first)).to.equal('v1');
    clock = 200;
    const third = mounts.mount('file', req, 99);
    expect(await text(second)).to.equal('v1');
    expect(await text(third)).to.equal('v1');
    expect(calls).to.have.length(1);
    expect(shared).to.equal(2);
  });

  it('a reconcile triggered after the call started gets a call of its own', async () => {
    const first = mounts.mount('file', req, 90);
    clock = 110;
    const fresh = mounts.mount('file', req, 105);
    expect(calls).to.have.length(2);
    calls[0]?.resolve(answer('old'));
    calls[1]?.resolve(answer('new'));
    expect(await text(first)).to.equal('old');
    expect(await text(fresh)).to.equal('new');
    expect(shared).to.equal(0);
  });

  it('a failure is shared with those waiting, and not kept', async () => {
    const first = mounts.mount('file', req, 90);
    const second = mounts.mount('file', req, 90);
    calls[0]?.reject(new Error('provider down'));
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => 'answered',
        (err: Error) => err.message,
      );
    expect(await failure(first)).to.equal('provider down');
    expect(await failure(second)).to.equal('provider down');
    expect(mounts.size).to.equal(0);
    const retry = mounts.mount('file', req, 90);
    expect(calls).to.have.length(2);
    calls[1]?.resolve(answer('v2'));
    expect(await text(retry)).to.equal('v2');
  });

  it('an answer idle longer than the idle time is dropped and not served', async () => {
    const first = mounts.mount('file', req, 90);
    calls[0]?.resolve(answer('v1'));
    await first;
    clock = 100 + 5_001;
    const later = mounts.mount('file', req, 90);
    expect(calls).to.have.length(2);
    calls[1]?.resolve(answer('v2'));
    expect(await text(later)).to.equal('v2');
  });

  it('clear() drops every answer', async () => {
    const first = mounts.mount('file', req, 90);
    calls[0]?.resolve(answer('v1'));
    await first;
    expect(mounts.size).to.equal(1);
    mounts.clear();
    expect(mounts.size).to.equal(0);
  });
});
