import { randomInt } from 'node:crypto';
import type { Logger } from '../../lib/logging/logger.js';
import type { Sleep } from '../../lib/sleep.js';
import { fromKubeError, httpStatusOf } from './api-errors.js';
import { KubeApiError, type KubeApi } from './client/kube-api.js';
import type { KubeList, KubeObject, WatchEvent } from './client/types.js';

/** Wait before re-listing after a list or watch failed. */
const RESTART_DELAY_MS = 5000;
/** Objects per list page. */
const PAGE_SIZE = 500;
/** The server ends each watch after 5-10 minutes (spread, so nodes do not re-watch in step). */
const WATCH_SECONDS = [300, 600] as const;
/** A watch that ends sooner than this is followed by a pause, so a server ending them at once cannot spin us. */
const SHORT_WATCH_MS = 1000;

/** The API calls a WatchedCache makes (a port: unit tests script it). */
export type ListWatchApi = Pick<KubeApi, 'get' | 'watch'>;

/** What a WatchedCache lists and watches. */
export interface WatchedCacheSpec<T extends KubeObject> {
  /** What it holds, for log lines ("SecretProviderClass"). */
  readonly what: string;
  /** API path of the collection, e.g. /api/v1/pods. */
  readonly path: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  /** Keeps only what the driver reads of each object (memory: a node's pods carry much status). */
  readonly slim?: (obj: T) => T;
}

/** Drops metadata.managedFields, which the driver never reads and which can dwarf the rest. */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
}

function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/**
 * True when resourceVersion `a` is known to be later than `b`. They are opaque strings to
 * clients, but etcd-backed servers hand out increasing integers; anything else is "not known".
 */
function isLater(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && /^\d+$/.test(a) && /^\d+$/.test(b) && BigInt(a) > BigInt(b);
}

/** The watch was told its resourceVersion is too old (HTTP 410): relist. */
class Expired extends Error {}

/**
 * A list+watch cache of one kind of object that keeps itself alive: it lists (in pages),
 * then watches from the list's resourceVersion, re-watching from the last version seen
 * when the server ends a watch, relisting at once when that version expired (410), and
 * relisting after 5 s when a list or watch fails, until stop().
 */
export class WatchedCache<T extends KubeObject> {
  private objects = new Map<string, T>();
  private everListed = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly listeners: ((obj: T) => void)[] = [];
  private readonly deleteListeners: ((obj: T) => void)[] = [];
  private readonly listedListeners: (() => void)[] = [];
  private readonly slim: (obj: T) => T;

  constructor(
    private readonly api: ListWatchApi,
    private readonly spec: WatchedCacheSpec<T>,
    private readonly logger: Logger,
    private readonly sleep: Sleep,
  ) {
    this.slim = spec.slim ?? withoutManagedFields;
  }

  /** Starts listing and watching in the background. */
  start(): void {
    this.running ??= this.run();
  }

  /** Stops watching; resolves when the background loop has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort(new Error(`${this.spec.what} cache stopped`));
    await this.running;
  }

  /** The cached object, if the cache has it. */
  get(name: string, namespace: string): T | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }

  /**
   * Puts in an object this process just wrote, unless the cache already holds a later
   * version: the watch event follows a moment later, and a reader right after the write
   * (rotation woken by a publish) must see it, also when it replaced an older object of
   * the same name (a pod recreated with its name).
   */
  remember(obj: T): void {
    const key = keyOf(obj);
    if (isLater(this.objects.get(key)?.metadata?.resourceVersion, obj.metadata?.resourceVersion)) return;
    this.objects.set(key, this.slim(structuredClone(obj)));
  }

  /** Every cached object. */
  values(): T[] {
    return [...this.objects.values()];
  }

  /** Calls `listener` for every object added or updated. */
  onChange(listener: (obj: T) => void): void {
    this.listeners.push(listener);
  }

  /** Calls `listener` for every object deleted (a watch event, or gone from a relist). */
  onDelete(listener: (obj: T) => void): void {
    this.deleteListeners.push(listener);
  }

  /** Calls `listener` after every complete list, once the change listeners have been told (everSynced is then true). */
  onListed(listener: () => void): void {
    this.listedListeners.push(listener);
  }

  /** True once listed at least once; later watch failures do not clear it. */
  get everSynced(): boolean {
    return this.everListed;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        let resourceVersion = await this.list();
        for (;;) resourceVersion = await this.watchFrom(resourceVersion);
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof Expired) {
          this.logger.debug(`${this.spec.what} watch expired; relisting`);
          continue;
        }
        this.logger.warn(`${this.spec.what} list/watch failed; relisting`, {
          error: fromKubeError(err, `list and watch ${this.spec.what}`).message,
          retryInMs: RESTART_DELAY_MS,
        });
        await this.sleep(RESTART_DELAY_MS, this.abort.signal).catch(() => undefined);
      }
    }
  }

  /** Lists every page, replaces the cache, and returns the list's resourceVersion. */
  private async list(): Promise<string> {
    const listed = new Map<string, T>();
    let resourceVersion: string;
    let next: string | undefined;
    do {
      const query = {
        labelSelector: this.spec.labelSelector,
        fieldSelector: this.spec.fieldSelector,
        limit: PAGE_SIZE,
        continue: next,
      };
      const page = await this.api.get<KubeList<T>>(this.spec.path, query, this.abort.signal);
      for (const item of page.items ?? []) listed.set(keyOf(item), this.slim(item));
      next = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? '';
    } while (next !== undefined);
    const previous = this.objects;
    this.objects = listed;
    if (this.stopped) return resourceVersion;
    for (const [key, obj] of listed)
      if (previous.get(key)?.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.notify(obj);
    for (const [key, obj] of previous) if (!listed.has(key)) this.notify(obj, this.deleteListeners);
    this.everListed = true;
    this.logger.info(`${this.spec.what} cache synced`, { objects: listed.size });
    for (const listener of this.listedListeners) listener();
    return resourceVersion;
  }

  /** Watches until the server ends the watch; returns the last resourceVersion seen. */
  private async watchFrom(resourceVersion: string): Promise<string> {
    let last = resourceVersion;
    const started = Date.now();
    const query = {
      labelSelector: this.spec.labelSelector,
      fieldSelector: this.spec.fieldSelector,
      resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: randomInt(WATCH_SECONDS[0], WATCH_SECONDS[1]),
    };
    try {
      await this.api.watch(
        this.spec.path,
        query,
        (event) => {
          last = this.apply(event as WatchEvent<T>) ?? last;
        },
        this.abort.signal,
      );
    } catch (err) {
      if (httpStatusOf(err) === 410) throw new Expired();
      throw err;
    }
    if (Date.now() - started < SHORT_WATCH_MS) await this.sleep(SHORT_WATCH_MS, this.abort.signal);
    return last;
  }

  /** Applies one watch event; returns its resourceVersion. */
  private apply(event: WatchEvent<T>): string | undefined {
    const obj = event.object;
    if (event.type === 'ERROR') {
      const status = obj as { code?: unknown; message?: unknown };
      if (status.code === 410) throw new Expired();
      throw new KubeApiError(
        typeof status.code === 'number' ? status.code : 500,
        JSON.stringify({ message: status.message }),
        'WATCH',
        this.spec.path,
      );
    }
    if (event.type === 'DELETED') {
      this.objects.delete(keyOf(obj));
      this.notify(obj, this.deleteListeners);
    } else if (event.type === 'ADDED' || event.type === 'MODIFIED') {
      const kept = this.slim(obj);
      this.objects.set(keyOf(kept), kept);
      this.notify(kept);
    }
    return obj.metadata?.resourceVersion;
  }

  private notify(obj: T, listeners = this.listeners): void {
    for (const listener of listeners) {
      try {
        listener(obj);
      } catch (err) {
        this.logger.warn(`${this.spec.what} change listener failed`, { error: (err as Error).message });
      }
    }
  }
}
