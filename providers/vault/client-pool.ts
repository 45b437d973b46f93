// The vault provider's HTTP clients (vault-http.ts), one per Vault address, namespace and
// TLS settings, shared by every identity (identity.ts) that talks to Vault with them: the
// socket bound of a client (vault-transport.ts) then holds per Vault, not per identity, and
// a client's TLS files are read once, not once per identity. A session holds its client
// through a handle; a client that no handle holds and no call uses is kept among the
// MAX_IDLE_CLIENTS let go last, and closed when pushed out. A TLS failure retires the
// client it happened on (only the first failure counts: calls still in flight on it end
// there): the next call of any identity makes a new client, reading the CA and client
// certificate files again (they may have rotated), once for all of them.
import { LRUCache } from 'lru-cache';
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

/** One client, and how many handles and calls hold it. */
export class ClientEntry {
  holders = 0;
  /** No longer handed out: closed once nobody holds it. */
  retired = false;
  constructor(
    readonly key: string,
    readonly http: Promise<VaultHttp>,
  ) {}
}

/** The clients by target: at most one current per target, shared by whoever asks for it. */
export class VaultClientPool {
  /** The client each target's calls go to now. */
  readonly #current = new Map<string, ClientEntry>();
  /** Current clients nobody holds, the least recently let go pushed out (and closed) first. */
  readonly #idle: LRUCache<string, ClientEntry>;
  /** Clients made so far (for tests: each made one read its TLS files). */
  made = 0;

  constructor(
    private readonly create: ClientFactory,
    maxIdle = MAX_IDLE_CLIENTS,
  ) {
    this.#idle = new LRUCache<string, ClientEntry>({
      max: maxIdle,
      dispose: (entry, _key, reason) => {
        if (reason === 'evict') this.retire(entry);
      },
    });
  }

  /** A hold on the current client of `target`, made now if there is none; give it back with release(). */
  acquire(target: ClientTarget): ClientEntry {
    const key = clientKey(target);
    let entry = this.#current.get(key);
    if (entry === undefined) {
      const made = new ClientEntry(key, this.create(target));
      this.made++;
      // A client that could not be made is not handed out again: the next call tries anew.
      made.http.catch(() => this.retire(made));
      this.#current.set(key, made);
      entry = made;
    }
    if (this.#idle.peek(key) === entry) this.#idle.delete(key);
    entry.holders++;
    return entry;
  }

  /** Gives back a hold: a client nobody holds goes idle, or is closed if it was retired. */
  release(entry: ClientEntry): void {
    entry.holders--;
    if (entry.holders > 0) return;
    if (entry.retired) closeEntry(entry);
    else this.#idle.set(entry.key, entry);
  }

  /** Hands `entry` out no more (a TLS failure, or pushed out of the idle ones); closed once nobody holds it. */
  retire(entry: ClientEntry): void {
    if (entry.retired) return;
    entry.retired = true;
    if (this.#current.get(entry.key) === entry) this.#current.delete(entry.key);
    if (this.#idle.peek(entry.key) === entry) this.#idle.delete(entry.key);
    if (entry.holders === 0) closeEntry(entry);
  }

  /** A client for one identity's session, holding the target's current client until closed; rejects if it can't be made. */
  async handle(target: ClientTarget): Promise<VaultHttp> {
    const handle = new ClientHandle(this, target);
    try {
      await handle.ready();
    } catch (err) {
      handle.close();
      throw err;
    }
    return handle;
  }

  /** Clients kept now, in use or idle (for tests). */
  get size(): number {
    return this.#current.size;
  }
}

function closeEntry(entry: ClientEntry): void {
  entry.http.then(
    (http) => http.close?.(),
    () => undefined,
  );
}

/** One session's view of its target's client: each call goes to the current one, switching after a retirement. */
class ClientHandle implements VaultHttp {
  /** The client this handle holds; undefined once closed (calls still work, holding a client while they run). */
  #held: ClientEntry | undefined;

  constructor(
    private readonly pool: VaultClientPool,
    private readonly target: ClientTarget,
  ) {
    this.#held = pool.acquire(target);
  }

  /** Resolves once the held client is made (its TLS files read). */
  async ready(): Promise<void> {
    await this.#held?.http;
  }

  async call(call: VaultCall): Promise<unknown> {
    const held = this.#held;
    if (held?.retired) {
      this.#held = this.pool.acquire(this.target);
      this.pool.release(held);
    }
    // Held for the call too, so a client is never closed under a call in flight.
    const entry = this.pool.acquire(this.target);
    try {
      return await (await entry.http).call(call);
    } catch (err) {
      if (err instanceof VaultCallError && err.failure.type === 'tls') this.pool.retire(entry);
      throw err;
    } finally {
      this.pool.release(entry);
    }
  }

  /** Lets go of the client (the session was dropped); calls in flight end first. */
  close(): void {
    const held = this.#held;
    this.#held = undefined;
    if (held) this.pool.release(held);
  }
}
