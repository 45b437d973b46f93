/**
 * A bounded map that forgets the least recently used entry when full: a provider's
 * per-identity clients, so a node with many workloads keeps memory bounded.
 * A capacity of 0 keeps nothing (every get misses).
 */
export class LruCache<K, V> {
  /** A Map iterates in insertion order: the first key is the least recently used. */
  private readonly entries = new Map<K, V>();

  /** `onEvict` gets each entry dropped to make room (not one deleted or replaced by the caller). */
  constructor(readonly capacity: number, private readonly onEvict: (key: K, value: V) => void = () => undefined) {}

  /** The value for `key`, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Stores `value` as the most recently used, evicting the least recently used entries beyond capacity. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.capacity <= 0) {
      this.onEvict(key, value);
      return;
    }
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as K;
      const dropped = this.entries.get(oldest) as V;
      this.entries.delete(oldest);
      this.onEvict(oldest, dropped);
    }
  }

  /** The least recently used entry, left where it is; undefined when empty. */
  oldest(): [K, V] | undefined {
    for (const entry of this.entries) return entry;
    return undefined;
  }

  /** Forgets `key`. */
  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keys from least to most recently used (for tests and debugging). */
  keys(): K[] {
    return [...this.entries.keys()];
  }
}
