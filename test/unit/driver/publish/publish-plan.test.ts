import { expect } from 'chai';
import { planPublish, type PublishPlan, type RepublishDecision } from '../../../../driver/publish/publish-plan.js';
import type { PublishOrigin } from '../../../../driver/publish/publish-outcome.js';

/** What the publisher found: why the call came, whether the target is mounted, rotation's answer (none: rotation off), the mount group. */
interface Found {
  readonly requested: PublishOrigin;
  readonly mounted: boolean;
  readonly decision: RepublishDecision | undefined;
  readonly groupUnchanged: boolean;
}

interface Row {
  readonly name: string;
  readonly found: Found;
  readonly plan: PublishPlan;
  /** Which questions the decision asked: rotation's gate, the writer about the mount group. */
  readonly asked: readonly ('rotation' | 'group')[];
}

const write = (origin: PublishOrigin, firstMount: boolean): PublishPlan => ({ action: 'write', origin, firstMount });

const rows: readonly Row[] = [
  {
    name: 'a first kubelet publish mounts and writes; rotation is not asked',
    found: { requested: 'kubelet', mounted: false, decision: 'skip', groupUnchanged: true },
    plan: write('kubelet', true),
    asked: [],
  },
  {
    name: 'a kubelet republish with rotation off fetches again',
    found: { requested: 'kubelet', mounted: true, decision: undefined, groupUnchanged: true },
    plan: write('kubelet', false),
    asked: ['rotation'],
  },
  {
    name: 'a fresh kubelet republish is skipped',
    found: { requested: 'kubelet', mounted: true, decision: 'skip', groupUnchanged: true },
    plan: { action: 'skip', origin: 'kubelet' },
    asked: ['rotation', 'group'],
  },
  {
    name: 'a fresh kubelet republish naming another mount group rewrites the files, as kubelet',
    found: { requested: 'kubelet', mounted: true, decision: 'skip', groupUnchanged: false },
    plan: write('kubelet', false),
    asked: ['rotation', 'group'],
  },
  {
    name: 'a due kubelet republish in reconciler mode fetches again, as kubelet',
    found: { requested: 'kubelet', mounted: true, decision: 'refresh', groupUnchanged: false },
    plan: write('kubelet', false),
    asked: ['rotation'],
  },
  {
    name: 'a due kubelet republish in republish mode runs as a rotation',
    found: { requested: 'kubelet', mounted: true, decision: 'rotate', groupUnchanged: true },
    plan: write('rotation', false),
    asked: ['rotation'],
  },
  {
    name: 'a rotation refresh of a mounted volume writes; rotation is not asked',
    found: { requested: 'rotation', mounted: true, decision: 'skip', groupUnchanged: true },
    plan: write('rotation', false),
    asked: [],
  },
  {
    name: 'a rotation refresh of a target no longer mounted never mounts it',
    found: { requested: 'rotation', mounted: false, decision: 'rotate', groupUnchanged: true },
    plan: { action: 'gone', origin: 'rotation' },
    asked: [],
  },
];

describe('planPublish: what a publish does, from what the publisher finds under the lock', () => {
  for (const row of rows) {
    it(row.name, () => {
      const asked: string[] = [];
      const plan = planPublish({
        requested: row.found.requested,
        mounted: row.found.mounted,
        republish: () => {
          asked.push('rotation');
          return row.found.decision;
        },
        groupUnchanged: () => {
          asked.push('group');
          return row.found.groupUnchanged;
        },
      });
      expect({ plan, asked }).to.deep.equal({ plan: row.plan, asked: row.asked });
    });
  }
});
