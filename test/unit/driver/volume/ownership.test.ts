import { expect } from 'chai';
import { dirModeFor, fileModeFor, MAX_MOUNT_GROUP } from '../../../../driver/volume/ownership.js';

// The mode rule for a volume written for a mount group (the pod's fsGroup): kubelet's
// SetVolumeOwnership for a read-only volume, which ORs 0440 into files and 0550 plus
// setgid into directories. Nothing is ever taken away, "others" never gain a bit.
describe('mount group mode rule (kubelet SetVolumeOwnership, read-only)', () => {
  const files: [number, number][] = [
    [0o400, 0o440], // the owner-only secret: now readable by the pod's group, by nobody else
    [0o440, 0o440],
    [0o600, 0o640],
    [0o640, 0o640],
    [0o644, 0o644], // the default mode stays as it is
    [0o444, 0o444],
    [0o000, 0o440],
    [0o200, 0o640],
    [0o004, 0o444], // readable by others already: stays so, not more
    [0o755, 0o755],
    [0o700, 0o740],
    [0o777, 0o777],
  ];
  for (const [mode, expected] of files) {
    it(`file ${mode.toString(8).padStart(4, '0')} → ${expected.toString(8).padStart(4, '0')}`, () => {
      expect(fileModeFor(mode, 1000)).to.equal(expected);
      expect(fileModeFor(mode, 1000) & 0o007, 'others never gain a bit').to.equal(mode & 0o007);
    });
  }

  const dirs: [number, number][] = [
    [0o755, 0o2755], // payload directories and the tmpfs root
    [0o750, 0o2750], // a --mount-mode=dir target directory
    [0o700, 0o2750],
    [0o2755, 0o2755],
  ];
  for (const [mode, expected] of dirs) {
    it(`directory ${mode.toString(8).padStart(4, '0')} → ${expected.toString(8)}`, () =>
      expect(dirModeFor(mode, 1000)).to.equal(expected));
  }

  it('group 0 is a group like any other', () => {
    expect(fileModeFor(0o400, 0)).to.equal(0o440);
    expect(dirModeFor(0o755, 0)).to.equal(0o2755);
  });

  it("without a mount group, modes are the provider's as they are", () => {
    for (const [mode] of files) expect(fileModeFor(mode, undefined)).to.equal(mode);
    expect(dirModeFor(0o755, undefined)).to.equal(0o755);
  });

  it('accepts the fsGroup range Kubernetes accepts (a non-negative int32)', () => {
    expect(MAX_MOUNT_GROUP).to.equal(2 ** 31 - 1);
  });
});
