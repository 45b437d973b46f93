import { expect } from 'chai';
import { mountPointSet, parseMountInfo } from '../../../../driver/mount/mountinfo.js';

const TEXT = [
  '22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/mapper/root rw,errors=remount-ro',
  '36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue',
  '61 22 0:52 / /var/lib/kubelet/pods/0b7c/volumes/kubernetes.io~csi/secrets-store-inline/mount rw,relatime shared:33 master:7 - tmpfs tmpfs rw,size=1024k',
  '70 22 0:60 / /mnt/with\\040space\\011tab rw,relatime - tmpfs my\\040src rw',
  '71 22 0:61 / /mnt/back\\134slash rw - nfs server:/export rw',
  '72 22 0:62 / /mnt/no-optional rw - overlay overlay rw,lowerdir=/a',
  '',
  'garbage line without separator',
  '   ',
].join('\n');

describe('parseMountInfo', () => {
  const entries = parseMountInfo(TEXT);

  it('keeps only well-formed lines', () => expect(entries).to.have.length(6));

  const expected: [number, string, string, string][] = [
    [0, '/', 'ext4', '/dev/mapper/root'],
    [1, '/mnt2', 'ext3', '/dev/root'],
    [2, '/var/lib/kubelet/pods/0b7c/volumes/kubernetes.io~csi/secrets-store-inline/mount', 'tmpfs', 'tmpfs'],
    [3, '/mnt/with space\ttab', 'tmpfs', 'my src'],
    [4, '/mnt/back\\slash', 'nfs', 'server:/export'],
    [5, '/mnt/no-optional', 'overlay', 'overlay'],
  ];
  for (const [i, mountPoint, fsType, source] of expected) {
    it(`line ${i}: ${mountPoint} (${fsType})`, () => expect(entries[i]).to.deep.equal({ mountPoint, fsType, source }));
  }

  it('returns nothing for empty input', () => expect(parseMountInfo('')).to.deep.equal([]));

  it('uses field 5 (mount point), not field 4 (root)', () => {
    expect(parseMountInfo('1 2 0:1 /sub/dir /target rw - tmpfs none rw')).to.deep.equal([
      { mountPoint: '/target', fsType: 'tmpfs', source: 'none' },
    ]);
  });

  it('does not split at a hyphen inside optional fields', () => {
    expect(parseMountInfo('1 2 0:1 / /t rw shared:1 propagate_from:2 unbindable-x - tmpfs none rw')[0]).to.deep.equal({
      mountPoint: '/t',
      fsType: 'tmpfs',
      source: 'none',
    });
  });
});

describe('mountPointSet', () => {
  const points = mountPointSet(TEXT);
  it('holds the unescaped mount points', () => {
    expect([
      ...mountPointSet(
        '1 2 0:1 /sub/dir /target rw - tmpfs none rw\n1 2 0:1 / /t rw shared:1 unbindable-x - tmpfs none rw',
      ),
    ]).to.deep.equal(['/target', '/t']);
    expect(mountPointSet('').size).to.equal(0);
  });
  const cases: [string, boolean][] = [
    ['/mnt2', true],
    ['/mnt1', false],
    ['/mnt/with space\ttab', true],
    ['/mnt/with\\040space\\011tab', false],
    ['/mnt', false],
  ];
  for (const [path, result] of cases)
    it(`${JSON.stringify(path)} → ${result}`, () => expect(points.has(path)).to.equal(result));
});
