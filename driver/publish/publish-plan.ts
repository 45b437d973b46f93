import type { PublishOrigin, RepublishDecision } from './publish-outcome.js';

/** What one publish call does, decided before anything is fetched or mounted. */
export type PublishPlan =
  /** A kubelet republish of a fresh volume: no provider call, nothing written; the skipped hooks run. */
  | { readonly action: 'skip' }
  /** A rotation refresh of a volume kubelet has unpublished since: rotation never mounts anything. */
  | { readonly action: 'gone' }
  /** Fetch and write, mounting first when `firstMount`; `origin` decides events and failure handling. */
  | { readonly action: 'fetch'; readonly origin: PublishOrigin; readonly firstMount: boolean };

/** What the plan is decided from. */
export interface PublishSituation {
  /** Why the call came: kubelet's NodePublishVolume, or the rotation reconciler. */
  readonly origin: PublishOrigin;
  /** The target holds a mounted volume already. */
  readonly alreadyMounted: boolean;
  /** Rotation's answer for a kubelet republish of a mounted volume (none without rotation). */
  readonly republish: RepublishDecision | undefined;
  /** The request's mount group is the one the files were written for (or it names none). */
  readonly groupUnchanged: boolean;
}

/**
 * The plan of a publish: a kubelet republish follows rotation's decision (`skip` only
 * while the files' group still matches: a new fsGroup rewrites ownership, fresh or not;
 * `rotate` runs it as a rotation refresh); a first mount is always fetched.
 */
export function planPublish(s: PublishSituation): PublishPlan {
  const decision = s.alreadyMounted && s.origin === 'kubelet' ? s.republish : undefined;
  if (decision === 'skip' && s.groupUnchanged) return { action: 'skip' };
  const origin: PublishOrigin = decision === 'rotate' ? 'rotation' : s.origin;
  if (!s.alreadyMounted && origin === 'rotation') return { action: 'gone' };
  return { action: 'fetch', origin, firstMount: !s.alreadyMounted };
}
