import { expect } from 'chai';
import { TargetLifecycle } from '../../../../driver/mount/target-lifecycle.js';

describe('TargetLifecycle', () => {
  it('tells every subscriber, in the order they subscribed, each target forgotten after they subscribed', () => {
    const targets = new TargetLifecycle();
    const told: string[] = [];
    targets.forget('/t/before');
    targets.onForgotten((t) => told.push(`publisher ${t}`));
    targets.onForgotten((t) => told.push(`rotation ${t}`));
    targets.forget('/t/a');
    targets.onForgotten((t) => told.push(`secret sync ${t}`));
    targets.forget('/t/b');
    expect(told).to.deep.equal([
      'publisher /t/a',
      'rotation /t/a',
      'publisher /t/b',
      'rotation /t/b',
      'secret sync /t/b',
    ]);
  });
});
