import type { PodRef } from './publish-request.js';
import type { SecretProviderClass } from '../spc/secret-provider-class.js';
import type { PublishHook } from './hook-stages.js';
import type { PublishOrigin } from './publish-outcome.js';

/**
 * What rotation makes of a kubelet NodePublishVolume of a volume that is already mounted:
 * `skip` (refreshed recently: no provider call, nothing written), `refresh` (fetch again
 * as a kubelet publish) or `rotate` (fetch again as a rotation refresh: rotation's events,
 * and a failure keeps the old content).
 */
export type RepublishDecision = 'skip' | 'refresh' | 'rotate';

/**
 * Rotation's say over kubelet's republishes (CSIDriver requiresRepublish) of mounted
 * volumes. Without rotation there is none, and a republish fetches again as a publish does.
 */
export interface RepublishGate {
  /** What the republish of `pod`'s mounted volume at `targetPath` does; asked once per such republish. */
  decide(targetPath: string, spc: SecretProviderClass, pod: PodRef): RepublishDecision;
  /**
   * Run for a republish skipped as fresh (nothing fetched or written): they learn kubelet's
   * latest request (its fresh tokens, the nodePublishSecretRef data as it is now), which
   * local mode's rotation refreshes with later.
   */
  readonly skippedHooks: readonly PublishHook[];
}

/** What the publisher knows when it decides, under the target's lock. */
export interface PublishSituation {
  /** Why the call came: a kubelet NodePublishVolume, or a rotation refresh. */
  readonly requested: PublishOrigin;
  /** The target holds a mounted volume already. */
  readonly mounted: boolean;
  /** Rotation's decision (undefined without rotation); asked only for a kubelet republish of a mounted volume. */
  readonly republish: () => RepublishDecision | undefined;
  /** Whether the request names the mount group the files were last written for; asked only of a fresh republish. */
  readonly groupUnchanged: () => boolean;
}

/**
 * What a publish does, decided before anything is fetched: `skip` a fresh republish,
 * drop a rotation refresh whose target is `gone`, or `write` (mounting first when
 * `firstMount`). `origin` is why it runs: a republish rotation rotates runs as a rotation.
 */
export type PublishPlan =
  | { readonly action: 'skip' | 'gone'; readonly origin: PublishOrigin }
  | { readonly action: 'write'; readonly origin: PublishOrigin; readonly firstMount: boolean };

/**
 * Decides what a publish does (the table in test/unit/driver/publish/publish-plan.test.ts).
 * Rotation is asked only about a kubelet republish of a mounted volume: in republish mode
 * its answer starts the clock of a rotation.
 */
export function planPublish(situation: PublishSituation): PublishPlan {
  const { requested, mounted } = situation;
  const decision = mounted && requested === 'kubelet' ? situation.republish() : undefined;
  // A republish naming another group than the files have rewrites ownership, fresh or not.
  if (decision === 'skip' && situation.groupUnchanged()) return { action: 'skip', origin: requested };
  const origin = decision === 'rotate' ? 'rotation' : requested;
  // Kubelet unpublished it since the round listed it: rotation never mounts anything.
  if (!mounted && origin === 'rotation') return { action: 'gone', origin };
  return { action: 'write', origin, firstMount: !mounted };
}
