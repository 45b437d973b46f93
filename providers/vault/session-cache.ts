// The vault provider's sessions (vault-session.ts) by identity, so that the Mounts of one
// identity share one token: --cache-size of them at most, the least recently used going
// first. A session pushed out lets go of its HTTP client (client-pool.ts: shared by the
// identities with its address, namespace and TLS settings); a session whose creation
// failed is not kept, so the next Mount tries again.
import { LRUCache } from 'lru-cache';
import { entryBound } from '../framework/lru-options.js';

/** What the cache needs of a session: a way to let go of its client. */
export interface ClosableSession {
  close(): void;
}

/** Closes `session` once it is made (nothing to close when its creation failed). */
function closeWhenMade(session: Promise<ClosableSession>): void {
  session.then(
    (s) => s.close(),
    () => undefined,
  );
}

/** Sessions by identity key, bounded by count; a capacity of 0 keeps none. */
export class SessionCache<S extends ClosableSession> {
  /** No cache at all with a capacity of 0: lru-cache has no "keep nothing" bound. */
  readonly #sessions: LRUCache<string, Promise<S>> | undefined;

  constructor(capacity: number) {
    this.#sessions =
      capacity > 0
        ? new LRUCache<string, Promise<S>>({
            ...entryBound(capacity),
            // Only a session pushed out: one forgotten by forget() is closed by its caller.
            dispose: (session, _key, reason) => {
              if (reason === 'evict') closeWhenMade(session);
            },
          })
        : undefined;
  }

  /**
   * The session of `key`: the cached one, or the one `create` makes (kept while the cache
   * has room; with a capacity of 0 it serves its Mount and is closed once made, as if
   * pushed out at once, its calls in flight still ending first).
   */
  session(key: string, create: () => Promise<S>): Promise<S> {
    const cached = this.#sessions?.get(key);
    if (cached) return cached;
    const session = create();
    if (this.#sessions === undefined) {
      closeWhenMade(session);
      return session;
    }
    this.#sessions.set(key, session);
    session.catch(() => {
      if (this.#sessions?.peek(key) === session) this.#sessions.delete(key);
    });
    return session;
  }

  /** Forgets the session of `key` if it is still `session`, without closing it (the caller does). */
  forget(key: string, session: S): void {
    const cached = this.#sessions?.peek(key);
    void cached?.then(
      (s) => {
        if (s === session && this.#sessions?.peek(key) === cached) this.#sessions.delete(key);
      },
      () => undefined,
    );
  }

  /** Sessions kept now (for tests). */
  get size(): number {
    return this.#sessions?.size ?? 0;
  }
}
