import { expect } from 'chai';
import { mountPointsUnder } from '../../driver/volume/mountinfo.js';

const line = (id: number, mountPoint: string, fs = 'tmpfs') => `${id} 1 0:${id} / ${mountPoint} rw,nosuid,nodev - ${fs} ${fs} rw`;

describe('mountPointsUnder (what the demo and test cleanup unmount)', () => {
  const text = [
    line(20, '/'), line(21, '/tmp', 'tmpfs'), line(30, '/tmp/ssc-demo-a/pods/p/volumes/secrets-store'),
    line(31, '/tmp/ssc-demo-a/pods/p/volumes/secrets-store/inner'), line(32, '/tmp/ssc-demo-ab/vol'), line(33, '/tmp/ssc-demo-a\\040x/vol'),
  ].join('\n');
  const cases: [string, string[]][] = [
    ['/tmp/ssc-demo-a', ['/tmp/ssc-demo-a/pods/p/volumes/secrets-store/inner', '/tmp/ssc-demo-a/pods/p/volumes/secrets-store']],
    ['/tmp/ssc-demo-a x', ['/tmp/ssc-demo-a x/vol']],
    ['/tmp/ssc-demo-none', []],
  ];
  for (const [dir, mounts] of cases) {
    it(`${dir}: only mounts inside it, deepest first`, () => expect(mountPointsUnder(text, dir)).to.deep.equal(mounts));
  }
});
