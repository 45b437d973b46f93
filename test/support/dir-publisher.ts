// The publisher the unit tests drive: a real VolumePublisher over a plain directory
// (DirMounter, no mount rights needed), with a class and a provider answer held in memory.
import { DirMounter } from '../../driver/mount/mounter.js';
import { TargetLifecycle } from '../../driver/mount/target-lifecycle.js';
import { TargetLocks } from '../../driver/mount/target-locks.js';
import type { PodRef, PublishRequest } from '../../driver/publish/publish-request.js';
import { VolumePublisher, type PublisherDeps } from '../../driver/publish/publisher.js';
import type { SecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { createLogger } from '../../lib/logging/logger.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';

/** The pod the unit tests publish for. */
export const TEST_POD: PodRef = { name: 'p', namespace: 'n', uid: 'u', serviceAccountName: 'default' };

/** Class `n/s` of the provider `fake`, with no parameters and no secretObjects. */
export const TEST_SPC: SecretProviderClass = {
  namespace: 'n',
  name: 's',
  provider: 'fake',
  parameters: {},
  secretObjects: [],
  annotations: {},
};

/** A provider's answer of one file `a` (mode 0644) holding `contents`, object `a` at `version`. */
export function oneFileAnswer(contents = 'x', version = 'v1'): MountResponse__Output {
  return {
    files: [{ path: 'a', mode: 0o644, contents: Buffer.from(contents) }],
    object_version: [{ id: 'a', version }],
    error: null,
  };
}

/**
 * A VolumePublisher over a plain directory with a silent logger: class TEST_SPC, and a
 * provider that answers oneFileAnswer(); `deps` replaces any of them or adds hooks.
 */
export function dirPublisher(deps: Partial<PublisherDeps> = {}): VolumePublisher {
  return new VolumePublisher({
    locks: new TargetLocks(),
    targets: new TargetLifecycle(),
    mounter: new DirMounter(),
    logger: createLogger({ component: 'test', silent: true }),
    now: () => new Date(),
    classes: { get: async () => TEST_SPC },
    providers: { mount: async () => oneFileAnswer() },
    ...deps,
  });
}

/** NodePublishVolume for `targetPath` of class `s`, as the CSI layer hands it to the publisher. */
export function publishRequest(targetPath: string, pod: PodRef = TEST_POD): PublishRequest {
  return { volumeId: 'v', targetPath, spcName: 's', pod, volumeContext: {}, secrets: {} };
}
