// The vault provider's HTTP clients (vault-http.ts), one per Vault address, namespace and
// TLS settings, shared by every identity (identity.ts) that talks to Vault with them: the
// socket bound of a client (vault-transport.ts) then holds per Vault, not per identity, and
// a client's TLS files are read once, not once per identity. A session uses its client
// through a handle; a client that no handle uses and no call is kept among the
// MAX_IDLE_CLIENTS let go last, and closed when pushed out. A TLS failure retires the
// client it happened on (only the first failure counts: calls still in flight on it end
// there, then it is closed): the next call of any identity makes a new client, reading
// the CA and client certificate files again (they may have rotated), once for all.
import { LRUCache } from 'lru-cache';
import { entryBound } from '../framework/lru-options.js';
import type { VaultTlsConfig } from './settings.js';
import { stableJson } from './stable-json.js';
import { VaultCallError, type VaultCall, type VaultHttp } from './vault-http.js';

/** The settings a client is made for: calls with equal ones share it. */
export interface ClientTarget {
  readonly vaultAddress: string;
  readonly vaultNamespace: string | undefined;
  readonly tls: VaultTlsConfig;
}

/** Makes the client of `target`, reading its TLS files; rejects (FAILED_PRECONDITION) when one can't be read. */
export type ClientFactory = (target: ClientTarget) => Promise<VaultHttp>;

/** Clients nobody uses kept for reuse (each keeps at most MAX_FREE_SOCKETS idle sockets open). */
export const MAX_IDLE_CLIENTS = 8;

/** A string equal for two targets exactly when their address, namespace and TLS settings are. */
export function clientKey(target: ClientTarget): string {
  return stableJson({
    vaultAddress: target.vaultAddress,
    vaultNamespace: target.vaultNamespace ?? null,
    tls: Object.fromEntries(Object.entries(target.tls).map(([k, v]) => [k, v ?? null])),
  });
}

/** One client, the handles that use it and its calls in flight. */
export class ClientEntry {
  /** Sessions' handles using it. */
  users = 0;
  /** Its calls in flight. */
  calls = 0;
  /** No longer handed out: closed once its calls end. */
  retired = false;
  closed = false;
  constructor(
    readonly key: string,
    readonly http: Promise<VaultHttp>,
  ) {}
}

/** The clients by target: at most one current per target, shared by whoever asks for it. */
export class VaultClientPool {
  /** The client each target's calls go to now. */
  readonly #current = new Map<string, ClientEntry>();
  /** Current clients no handle uses and no call, the least recently let go pushed out (and closed) first. */
  readonly #idle: LRUCache<string, ClientEntry>;

  constructor(
    private readonly create: ClientFactory,
    maxIdle = MAX_IDLE_CLIENTS,
  ) {
    this.#idle = new LRUCache<string, ClientEntry>({
      ...entryBound(maxIdle),
      dispose: (entry, _key, reason) => {
        if (reason === 'evict') this.retire(entry);
      },
    });
  }

  /** The current client of `target`, made now if there is none (its TLS files read). */
  current(target: ClientTarget): ClientEntry {
    const key = clientKey(target);
    const entry = this.#current.get(key);
    if (entry !== undefined) return entry;
    const made = new ClientEntry(key, this.create(target));
    // A client that could not be made is not handed out again: the next call tries anew.
    made.http.catch(() => this.retire(made));
    this.#current.set(key, made);
    return made;
  }

  /** Counts a handle (`by` 1) or a call (`by` 1, `call`) starting to use `entry`, or ending (`by` -1). */
  hold(entry: ClientEntry, by: 1 | -1, call = false): void {
    if (call) entry.calls += by;
    else entry.users += by;
    if (by === 1) {
      if (this.#idle.peek(entry.key) === entry) this.#idle.delete(entry.key);
    } else if (entry.retired) {
      if (entry.calls === 0) closeEntry(entry);
    } else if (entry.users === 0 && entry.calls === 0) {
      this.#idle.set(entry.key, entry);
    }
  }

  /** Hands `entry` out no more (a TLS failure, or pushed out of the idle ones); closed once its calls end. */
  retire(entry: ClientEntry): void {
    if (entry.retired) return;
    entry.retired = true;
    if (this.#current.get(entry.key) === entry) this.#current.delete(entry.key);
    if (this.#idle.peek(entry.key) === entry) this.#idle.delete(entry.key);
    if (entry.calls === 0) closeEntry(entry);
  }

  /** A client for one identity's session, using the target's current client; rejects if it can't be made. */
  async handle(target: ClientTarget): Promise<VaultHttp & { close(): void }> {
    const handle = new ClientHandle(this, target);
    try {
      await handle.ready();
    } catch (err) {
      handle.close();
      throw err;
    }
    return handle;
  }

  /** Clients current now, in use or idle (for tests). */
  get size(): number {
    return this.#current.size;
  }
}

function closeEntry(entry: ClientEntry): void {
  if (entry.closed) return;
  entry.closed = true;
  entry.http.then(
    (http) => http.close?.(),
    () => undefined,
  );
}

/** One session's view of its target's client: each call goes to the current one, switching after a retirement. */
class ClientHandle implements VaultHttp {
  /** The client this handle uses; undefined once closed (its calls still go to the current client). */
  #entry: ClientEntry | undefined;

  constructor(
    private readonly pool: VaultClientPool,
    private readonly target: ClientTarget,
  ) {
    this.#entry = pool.current(target);
    pool.hold(this.#entry, 1);
  }

  /** Resolves once the client is made (its TLS files read). */
  async ready(): Promise<void> {
    await this.#entry?.http;
  }

  /** The client calls go to now: this handle's, or the target's current one once that was retired. */
  private entry(): ClientEntry {
    const used = this.#entry;
    if (used === undefined) return this.pool.current(this.target);
    if (!used.retired) return used;
    const next = this.pool.current(this.target);
    this.pool.hold(next, 1);
    this.pool.hold(used, -1);
    this.#entry = next;
    return next;
  }

  async call(call: VaultCall): Promise<unknown> {
    const entry = this.entry();
    // Counted while in flight, so a client is never closed under a call.
    this.pool.hold(entry, 1, true);
    try {
      return await (await entry.http).call(call);
    } catch (err) {
      if (err instanceof VaultCallError && err.failure.type === 'tls') this.pool.retire(entry);
      throw err;
    } finally {
      this.pool.hold(entry, -1, true);
    }
  }

  /** Lets go of the client (the session was dropped); calls in flight end first. */
  close(): void {
    const used = this.#entry;
    this.#entry = undefined;
    if (used) this.pool.hold(used, -1);
  }
}
