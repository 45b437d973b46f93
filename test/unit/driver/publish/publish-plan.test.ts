import { expect } from 'chai';
import { planPublish, type PublishPlan, type PublishSituation } from '../../../../driver/publish/publish-plan.js';

describe('planPublish', () => {
  const fetch = (origin: 'kubelet' | 'rotation', firstMount: boolean): PublishPlan => ({
    action: 'fetch',
    origin,
    firstMount,
  });
  const cases: [string, PublishSituation, PublishPlan][] = [
    [
      'a first kubelet publish',
      { origin: 'kubelet', alreadyMounted: false, republish: undefined, groupUnchanged: true },
      fetch('kubelet', true),
    ],
    [
      'a first publish ignores a decision (none is asked for)',
      { origin: 'kubelet', alreadyMounted: false, republish: 'skip', groupUnchanged: true },
      fetch('kubelet', true),
    ],
    [
      'a republish without rotation',
      { origin: 'kubelet', alreadyMounted: true, republish: undefined, groupUnchanged: true },
      fetch('kubelet', false),
    ],
    [
      'a republish rotation calls fresh',
      { origin: 'kubelet', alreadyMounted: true, republish: 'skip', groupUnchanged: true },
      { action: 'skip' },
    ],
    [
      'a fresh republish naming a new fsGroup rewrites ownership',
      { origin: 'kubelet', alreadyMounted: true, republish: 'skip', groupUnchanged: false },
      fetch('kubelet', false),
    ],
    [
      'a republish rotation calls due to refresh',
      { origin: 'kubelet', alreadyMounted: true, republish: 'refresh', groupUnchanged: true },
      fetch('kubelet', false),
    ],
    [
      'a republish in republish mode runs as a rotation',
      { origin: 'kubelet', alreadyMounted: true, republish: 'rotate', groupUnchanged: true },
      fetch('rotation', false),
    ],
    [
      'a rotation refresh of a mounted volume',
      { origin: 'rotation', alreadyMounted: true, republish: undefined, groupUnchanged: true },
      fetch('rotation', false),
    ],
    [
      'a rotation refresh never asks rotation again',
      { origin: 'rotation', alreadyMounted: true, republish: 'skip', groupUnchanged: true },
      fetch('rotation', false),
    ],
    [
      'a rotation refresh of an unpublished volume',
      { origin: 'rotation', alreadyMounted: false, republish: undefined, groupUnchanged: true },
      { action: 'gone' },
    ],
  ];
  for (const [name, situation, plan] of cases) {
    it(name, () => expect(planPublish(situation)).to.deep.equal(plan));
  }
});
