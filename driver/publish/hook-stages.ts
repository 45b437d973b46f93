import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CallLimits } from '../provider-client/client.js';
import type { PublishedVolume } from './publish-outcome.js';

/**
 * Runs after the files are in place (pod status, Secret sync); a throw fails the
 * publish. A hook with `split` lets its first part start before a first mount's files are
 * written (see SplitPublishHook); called as a function it runs its parts in turn.
 */
export type PublishHook = ((volume: PublishedVolume, limits: CallLimits) => Promise<void>) & {
  readonly split?: SplitPublishHook<unknown>;
};

/**
 * A publish hook in two parts. `beforeWrite` needs the object versions but not the files
 * (recording the pod status): for a first mount the publisher starts it as soon as the
 * provider has answered and the target is checked writable, so its API request waits on
 * the server while the files are written; `afterWrite` (Secret sync, which reads the files)
 * gets its result once both are done. Every other publish runs the parts in turn after the
 * write, because what `beforeWrite` does depends on whether the write changed anything.
 */
export interface SplitPublishHook<T> {
  beforeWrite(volume: PublishedVolume, limits: CallLimits): Promise<T>;
  afterWrite(volume: PublishedVolume, limits: CallLimits, before: T): Promise<void>;
}

/** A PublishHook made of two parts. */
export function splitHook<T>(split: SplitPublishHook<T>): PublishHook {
  const whole = async (volume: PublishedVolume, limits: CallLimits) =>
    split.afterWrite(volume, limits, await split.beforeWrite(volume, limits));
  return Object.assign(whole, { split: split as SplitPublishHook<unknown> });
}

/**
 * The hooks of one publish. For a first mount, `start` begins the `beforeWrite` part of
 * every split hook before the files are written; `run` then runs the hooks in their order
 * (a split hook's `afterWrite` with its early result, others whole). Whatever fails, no
 * early part is still running when the failure is reported: failure hooks delete a first
 * mount's pod status, which must not be created after that.
 */
export class PublishHooks {
  private readonly early = new Map<PublishHook, Promise<unknown>>();

  constructor(private readonly hooks: readonly PublishHook[]) {}

  /**
   * Starts the early parts for `volume` (a first mount about to be written), then gives the
   * event loop one turn, so their requests are on the wire before the synchronous write
   * holds it.
   */
  async start(volume: PublishedVolume, limits: CallLimits): Promise<void> {
    for (const hook of this.hooks) {
      if (!hook.split) continue;
      const started = hook.split.beforeWrite(volume, limits);
      started.catch(() => undefined); // awaited in run or settled
      this.early.set(hook, started);
    }
    if (this.early.size > 0) await nextTurn();
  }

  /** Waits until every early part has finished, however (the write failed). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.early.values());
  }

  /** Runs the hooks in order after the write; the first failure is thrown once every early part finished. */
  async run(volume: PublishedVolume, limits: CallLimits): Promise<void> {
    try {
      for (const hook of this.hooks) {
        const early = this.early.get(hook);
        if (early !== undefined && hook.split) await hook.split.afterWrite(volume, limits, await early);
        else await hook(volume, limits);
      }
    } catch (err) {
      await this.settled();
      throw err;
    }
  }
}
