// What a publish hands on: to hooks when it succeeds, to failure hooks when it fails.
import type { SscError } from '../../lib/errors.js';
import type { SecretProviderClass } from '../spc/secret-provider-class.js';
import type { ObjectVersion } from '../volume/payload.js';
import type { PublishRequest } from './publish-request.js';

/** What a successful publish did. */
export interface PublishedVolume {
  readonly request: PublishRequest;
  readonly spc: SecretProviderClass;
  readonly versions: readonly ObjectVersion[];
  /** True when files were (re)written, false when everything already matched. */
  readonly changed: boolean;
  /** True when this call mounted the volume (first publish). */
  readonly firstMount: boolean;
  /** Why it ran: a kubelet NodePublishVolume, or rotation (the reconciler, or a due kubelet republish in republish mode). */
  readonly origin: PublishOrigin;
  /** True when a kubelet republish found the volume fresh and did not call the provider. */
  readonly skipped: boolean;
}

/**
 * Why a publish runs: a kubelet NodePublishVolume, or a rotation refresh of a mounted
 * volume (by the reconciler, or a kubelet republish that rotation mode `republish` turned
 * into one).
 */
export type PublishOrigin = 'kubelet' | 'rotation';

/** A publish that failed: what was known when it failed. */
export interface PublishFailure {
  readonly request: PublishRequest;
  /** The class, when it was resolved before the failure. */
  readonly spc: SecretProviderClass | undefined;
  readonly error: SscError;
  /** True when the volume stays mounted with its previous content (a failed republish). */
  readonly stillMounted: boolean;
  readonly origin: PublishOrigin;
}

/** Runs after a failed publish (events, pod status lastError); must not throw. */
export type PublishFailureHook = (failure: PublishFailure) => Promise<void>;
