import { expect } from 'chai';
import type { EventRecorder } from '../../../../driver/k8s/event-recorder.js';
import type { KubeApi } from '../../../../driver/k8s/client/kube-api.js';
import { WorkloadRestarter } from '../../../../driver/rotation/workload-restart.js';
import { RESTARTED_AT_ANNOTATION } from '../../../../driver/rotation/restart-decision.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const NOW = new Date('2026-11-23T12:00:00Z');
const POD = { name: 'web-1', namespace: 'ns', uid: 'u', serviceAccountName: 'sa' };
const OWNERS = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'w', controller: true }];

/** A StatefulSet the fake API serves: each get returns the next template annotations given. */
function fakeApi(
  reads: (Record<string, string> | undefined)[],
  patchFailures: number[],
): { api: KubeApi; gets: number; patches: number } {
  const state = { gets: 0, patches: 0, api: undefined as unknown as KubeApi };
  state.api = {
    get: async () => {
      const annotations = reads[Math.min(state.gets++, reads.length - 1)];
      return { spec: { template: { metadata: annotations ? { annotations } : {} } } };
    },
    patch: async () => {
      const code = patchFailures[state.patches++];
      if (code !== undefined) throw Object.assign(new Error(`HTTP ${code}`), { code });
      return {};
    },
  } as unknown as KubeApi;
  return state;
}

function restarter(api: KubeApi, sleep: (ms: number, signal?: AbortSignal) => Promise<void>) {
  const events: string[] = [];
  const r = new WorkloadRestarter({
    api,
    logger: createLogger({ component: 'test', silent: true }),
    now: () => NOW,
    sleep,
    minIntervalMs: 600_000,
    events: {
      event: async (_pod: unknown, _type: string, reason: string) => {
        events.push(reason);
      },
    } as unknown as EventRecorder,
  });
  return { r, events };
}

describe('WorkloadRestarter', () => {
  it('a patch refused with 422 (another node restarted first) is decided again from a fresh read: skipped, no second restart', async () => {
    // Read 1: no restart yet; the patch loses the race (422). Read 2: another node restarted after the pod was created.
    const fake = fakeApi([undefined, { [RESTARTED_AT_ANNOTATION]: '2026-11-23T11:59:59Z' }], [422]);
    const { r, events } = restarter(fake.api, async () => undefined);
    await r.restart(POD, OWNERS, 'spc', new Date('2026-11-23T11:00:00Z'));
    expect({ gets: fake.gets, patches: fake.patches, events }).to.deep.equal({ gets: 2, patches: 1, events: [] });
  });

  it('gives up after three 422s with a WorkloadRestartFailed event', async () => {
    const fake = fakeApi([undefined], [422, 422, 422]);
    const { r, events } = restarter(fake.api, async () => undefined);
    await r.restart(POD, OWNERS, 'spc', new Date('2026-11-23T11:00:00Z'));
    expect({ patches: fake.patches, events }).to.deep.equal({ patches: 3, events: ['WorkloadRestartFailed'] });
  });

  it('stop() cancels a deferred restart: no patch is ever sent', async () => {
    // Restarted 1 minute ago, before this pod was created: too soon again (interval 10 minutes), so deferred.
    const fake = fakeApi([{ [RESTARTED_AT_ANNOTATION]: '2026-11-23T11:59:00Z' }], []);
    let waiting: Promise<void> | undefined;
    const sleep = (_ms: number, signal?: AbortSignal) => {
      waiting = new Promise<void>((_, reject) =>
        signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
      );
      return waiting;
    };
    const { r, events } = restarter(fake.api, sleep);
    await r.restart(POD, OWNERS, 'spc', new Date('2026-11-23T11:59:30Z'));
    expect(events).to.deep.equal(['WorkloadRestartDeferred']);
    r.stop();
    await (waiting as Promise<void>).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.patches).to.equal(0);
  });
});
