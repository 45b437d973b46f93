/** Drops what a part of the driver keeps for one target path. */
export type ForgetTarget = (targetPath: string) => void;

/**
 * The mounted targets' lifecycle, one per driver. After a successful NodeUnpublishVolume
 * the target is forgotten: every part that keeps state per target (the publisher and its
 * atomic writer, the Kubernetes publish hooks, Secret sync, rotation) subscribed when it
 * was made, and drops that state, in the order they subscribed.
 */
export class TargetLifecycle {
  readonly #subscribers: ForgetTarget[] = [];

  /** Subscribes `forget`: it is called with every target forgotten from now on. */
  onForgotten(forget: ForgetTarget): void {
    this.#subscribers.push(forget);
  }

  /** The volume at `targetPath` is gone: every subscriber drops what it keeps of it. */
  forget(targetPath: string): void {
    for (const forget of this.#subscribers) forget(targetPath);
  }
}
