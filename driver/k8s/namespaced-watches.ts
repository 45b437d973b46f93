import type { Logger } from '../../lib/logging/logger.js';
import type { Sleep } from '../../lib/sleep.js';
import type { KubeObject } from './client/types.js';
import { type ListWatchApi, WatchedCache, type WatchedCacheSpec } from './watched-cache.js';

/** What the set knows of one object: it is there (`object`), it is not (`object` undefined), or it cannot say (undefined). */
export type NamespacedLookup<T> = { readonly object: T | undefined } | undefined;

/**
 * One kind of object, list+watched per namespace, only in the namespaces asked for: a node
 * holds and receives the objects of the namespaces its volumes are in, never the cluster's.
 * Watches start on `ensure` and stop by themselves once no `ensure` touched their
 * namespace for `idleMs` (when set), so interest need not be tracked elsewhere; `stop`
 * ends them all for good.
 */
export class NamespacedWatches<T extends KubeObject> {
  private readonly watches = new Map<string, WatchedCache<T>>();
  /** When each namespace was last looked up or ensured (for idle expiry). */
  private readonly touched = new Map<string, number>();
  private readonly listeners: ((obj: T) => void)[] = [];
  private readonly deleteListeners: ((obj: T) => void)[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  /** Set by stop(): nothing starts any more (a caller's late ensure is a no-op). */
  private stopped = false;

  constructor(
    private readonly api: ListWatchApi,
    /** The list+watch of one namespace. */
    private readonly specOf: (namespace: string) => WatchedCacheSpec<T>,
    private readonly logger: Logger,
    private readonly sleep: Sleep,
    private readonly options: { readonly idleMs?: number; readonly now?: () => number } = {},
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The object when `namespace` is watched and listed; undefined when the caller must GET it. */
  lookup(namespace: string, name: string): NamespacedLookup<T> {
    const watch = this.watches.get(namespace);
    if (!watch?.everSynced) return undefined;
    return { object: watch.get(name, namespace) };
  }

  /** Starts watching `namespace` unless it is; marks it in use (idle expiry counts from here). */
  ensure(namespace: string): void {
    if (this.stopped) return;
    if (!this.watches.has(namespace)) this.start(namespace);
    this.touched.set(namespace, this.now());
  }

  private start(namespace: string): void {
    // An invalid namespace throws here (the path checks it), before anything is kept.
    const watch = new WatchedCache<T>(this.api, this.specOf(namespace), this.logger, this.sleep);
    watch.onChange((obj) => this.notify(obj, this.listeners));
    watch.onDelete((obj) => this.notify(obj, this.deleteListeners));
    this.watches.set(namespace, watch);
    watch.start();
    this.scheduleSweep();
  }

  /** An object this process just wrote: readers right after the write must see it. */
  remember(obj: T): void {
    this.watches.get(obj.metadata?.namespace ?? '')?.remember(obj);
  }

  /** Calls `listener` for every object added or changed in any watched namespace. */
  onChange(listener: (obj: T) => void): void {
    this.listeners.push(listener);
  }

  /** Calls `listener` for every object deleted in any watched namespace. */
  onDelete(listener: (obj: T) => void): void {
    this.deleteListeners.push(listener);
  }

  /** True while `namespace` is watched. */
  watching(namespace: string): boolean {
    return this.watches.has(namespace);
  }

  /** Namespaces watched now. */
  get namespaces(): string[] {
    return [...this.watches.keys()];
  }

  /** True when every watch has listed at least once (none: true). */
  get everSynced(): boolean {
    return [...this.watches.values()].every((w) => w.everSynced);
  }

  /** Stops every watch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.sweeper);
    this.sweeper = undefined;
    await this.stopWatches([...this.watches.keys()]);
  }

  /** Stops the watches of namespaces no lookup touched for idleMs. */
  async sweep(): Promise<void> {
    const { idleMs } = this.options;
    if (idleMs === undefined) return;
    const now = this.now();
    await this.stopWatches([...this.watches.keys()].filter((ns) => now - (this.touched.get(ns) ?? 0) >= idleMs));
  }

  private async stopWatches(namespaces: readonly string[]): Promise<void> {
    const stopping = namespaces.flatMap((ns) => {
      const watch = this.watches.get(ns);
      this.watches.delete(ns);
      this.touched.delete(ns);
      return watch ? [watch] : [];
    });
    await Promise.all(stopping.map((w) => w.stop()));
  }

  private scheduleSweep(): void {
    const { idleMs } = this.options;
    if (idleMs === undefined || this.sweeper !== undefined) return;
    this.sweeper = setInterval(() => void this.sweep(), Math.max(1000, idleMs / 4));
    this.sweeper.unref();
  }

  private notify(obj: T, listeners: readonly ((obj: T) => void)[]): void {
    for (const listener of listeners) listener(obj);
  }
}
