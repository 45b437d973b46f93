import { expect } from 'chai';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeMountSource } from '../../../../driver/mount/mounter.js';
import { repairTarget } from '../../../../driver/volume/payload-repair.js';
import { ownTmpfsMountPoints } from '../../../../driver/mount/startup-repair.js';
import { SscError } from '../../../../lib/errors.js';

const line = (id: number, mountPoint: string, fsType: string, source: string) =>
  `${id} 1 0:${id} / ${mountPoint} rw,nosuid,nodev - ${fsType} ${source} rw,mode=755`;

describe("startup repair: which mounts are this driver instance's", () => {
  const mine = volumeMountSource('/csi/csi.sock');
  const text = [
    line(20, '/var/lib/kubelet/pods/a/volumes/kubernetes.io~csi/s/mount', 'tmpfs', mine),
    line(21, '/var/lib/kubelet/pods/a/volumes/kubernetes.io~secret/t', 'tmpfs', 'tmpfs'), // kubelet's Secret volume
    line(22, '/var/lib/kubelet/pods/a/volumes/kubernetes.io~empty-dir/m', 'tmpfs', 'tmpfs'), // a pod's memory emptyDir
    line(23, '/other/target', 'tmpfs', volumeMountSource('/other/csi.sock')), // another driver instance
    line(24, '/with\\040space', 'tmpfs', volumeMountSource('/run/a b.sock').replace(' ', '\\040')),
    line(25, '/var/lib/kubelet/pods/a/volumes/kubernetes.io~csi/s/mount', 'tmpfs', mine), // listed twice (propagation)
    line(26, '/not-tmpfs', 'ext4', mine),
  ].join('\n');

  it("keeps only tmpfs mounts named after this driver's socket, once each", () => {
    expect(ownTmpfsMountPoints(text, mine)).to.deep.equal([
      '/var/lib/kubelet/pods/a/volumes/kubernetes.io~csi/s/mount',
    ]);
    expect(ownTmpfsMountPoints(text, volumeMountSource('/run/a b.sock'))).to.deep.equal(['/with space']);
  });

  it('refuses a target whose ..data points anywhere but a sibling payload directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ssc-repair-'));
    try {
      await mkdir(join(dir, 'elsewhere'));
      await symlink('/var/lib/kubelet', join(dir, '..data'));
      const err = await repairTarget(dir).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(SscError);
      expect((err as SscError).message).to.match(
        /\.\.data points at "\/var\/lib\/kubelet", not at a payload directory/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
