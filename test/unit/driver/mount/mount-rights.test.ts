import { expect } from 'chai';
import {
  assertMountRights,
  effectiveCapabilities,
  mountRightsProblem,
  type MountRightsFacts,
} from '../../../../driver/mount/mount-rights.js';

const ROOT_CAPS = 0x000001ffffffffffn; // a privileged container or root on the host
const NO_CAPS = 0n; // an ordinary user
const ALL_BUT_SYS_ADMIN = ROOT_CAPS & ~(1n << 21n); // root in a container without privileges

describe('effectiveCapabilities (/proc/self/status)', () => {
  const cases: [string, string, bigint | undefined][] = [
    [
      'root',
      'Name:\tnode\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n',
      ROOT_CAPS,
    ],
    ['a user', 'Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n', NO_CAPS],
    ['a Docker default container', 'CapEff:\ta80425fb\n', 0xa80425fbn],
    ['no CapEff line', 'Name:\tnode\n', undefined],
  ];
  for (const [name, text, caps] of cases) it(`reads ${name}`, () => expect(effectiveCapabilities(text)).to.equal(caps));
});

describe('mountRightsProblem (fail at start, not EPERM at every publish)', () => {
  const base: MountRightsFacts = { mountMode: 'tmpfs', kubernetesMode: true, capEff: ROOT_CAPS, uid: 0 };
  const cases: [string, Partial<MountRightsFacts>, RegExp | undefined][] = [
    ['root may mount', {}, undefined],
    [
      'root without CAP_SYS_ADMIN (unprivileged container), Kubernetes mode',
      { capEff: ALL_BUT_SYS_ADMIN },
      /^cannot mount tmpfs volumes: the driver runs as uid 0 without CAP_SYS_ADMIN; run it as root in a privileged container, as deploy\/driver-daemonset\.yaml does$/,
    ],
    [
      'a user, Kubernetes mode',
      { capEff: NO_CAPS, uid: 1000 },
      /uid 1000 without CAP_SYS_ADMIN; run it as root in a privileged container/,
    ],
    [
      'a user, local mode: told about --mount-mode=dir',
      { capEff: NO_CAPS, uid: 1000, kubernetesMode: false },
      /^cannot mount tmpfs volumes: the driver runs as uid 1000 without CAP_SYS_ADMIN; run it as root, or add --mount-mode=dir \(local mode: volumes become plain directories on disk\)$/,
    ],
    ['a user with CAP_SYS_ADMIN (file capabilities)', { capEff: 1n << 21n, uid: 1000 }, undefined],
    [
      'dir mode needs no mount rights',
      { capEff: NO_CAPS, uid: 1000, kubernetesMode: false, mountMode: 'dir' },
      undefined,
    ],
    ['unknown capabilities (no /proc): not guessed', { capEff: undefined, uid: 1000 }, undefined],
  ];
  for (const [name, facts, problem] of cases) {
    it(name, () => {
      const got = mountRightsProblem({ ...base, ...facts });
      if (problem) expect(got).to.match(problem);
      else expect(got).to.equal(undefined);
    });
  }

  it('assertMountRights skips the check when /proc/self/status cannot be read', () => {
    expect(() =>
      assertMountRights({ mountMode: 'tmpfs', spcDir: '' }, () => {
        throw new Error('ENOENT');
      }),
    ).not.to.throw();
    expect(() =>
      assertMountRights({ mountMode: 'tmpfs', spcDir: '/spc' }, () => 'CapEff:\t0000000000000000\n'),
    ).to.throw(/--mount-mode=dir/);
  });
});
