import { SscError } from '../../lib/errors.js';
import { cleanTargetPath } from './target-path.js';

/**
 * One operation at a time per target path. A second caller is refused with
 * ABORTED rather than queued: kubelet retries, and rotation skips the volume this round.
 */
export class TargetLocks {
  private readonly held = new Set<string>();

  /** Runs `fn` holding the lock for `targetPath`, or throws aborted if it is held. */
  async withLock<T>(targetPath: string, fn: () => Promise<T>): Promise<T> {
    // Every spelling of one directory takes one lock (four spellings
    // published at once stacked four tmpfs mounts).
    const key = cleanTargetPath(targetPath);
    if (this.held.has(key)) {
      throw new SscError('aborted', `an operation for target path ${targetPath} is already in progress`, {
        reason: 'OperationInProgress',
      });
    }
    this.held.add(key);
    try {
      return await fn();
    } finally {
      this.held.delete(key);
    }
  }

  /** The (clean) paths held now: publishes never nest a volume in one being set up. */
  heldPaths(): string[] {
    return [...this.held];
  }

  /** Number of locks held now (for tests and metrics). */
  get size(): number {
    return this.held.size;
  }
}
