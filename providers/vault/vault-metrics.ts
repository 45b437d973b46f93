// The vault provider's own metrics, next to the framework's provider_mount_* on
// --health-addr /metrics: how much Vault traffic the read cache, the lease store and
// shared logins saved. Labels are fixed small sets: never an identity, a role, a path
// or a lease id (unbounded, and a path may say more than it should).
import { Counter, Registry } from 'prom-client';
import type { LeaseDropReason } from './lease-store.js';
import type { LeasedReadOutcome } from './leased-read.js';

/** How a GET read was answered: from the window, by Vault, or by joining a read in flight. */
export type ReadCacheResult = 'hit' | 'miss' | 'coalesced';

/** Counters of the vault provider, registered on one registry. */
export class VaultMetrics {
  private readonly readCache: Counter<'result'>;
  private readonly leases: Counter<'outcome'>;
  private readonly leaseDrops: Counter<'reason'>;
  private readonly logins: Counter<'result'>;

  /** Registers the counters on `registry` (the provider's /metrics one; a fresh one keeps them private). */
  constructor(registry: Registry = new Registry()) {
    const registers = [registry];
    this.readCache = new Counter({
      name: 'vault_read_cache_total',
      help: 'Vault GET reads by how they were answered: hit (from the window), miss (sent to Vault), coalesced (joined a read in flight)',
      labelNames: ['result'],
      registers,
    });
    this.leases = new Counter({
      name: 'vault_lease_total',
      help: 'Dynamic secrets (responses with a lease) served, by outcome: reused (held lease, nothing sent), renewed, fetched (issued anew)',
      labelNames: ['outcome'],
      registers,
    });
    this.leaseDrops = new Counter({
      name: 'vault_lease_dropped_total',
      help: 'Leases the provider stopped holding, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.logins = new Counter({
      name: 'vault_login_total',
      help: 'Vault logins made, by result',
      labelNames: ['result'],
      registers,
    });
    // Zeros for every label value, so rates and absent-series alerts work from the start.
    for (const result of ['hit', 'miss', 'coalesced']) this.readCache.inc({ result }, 0);
    for (const outcome of ['reused', 'renewed', 'fetched']) this.leases.inc({ outcome }, 0);
    for (const reason of ['ended', 'capacity', 'too-large', 'released']) this.leaseDrops.inc({ reason }, 0);
    for (const result of ['success', 'failure']) this.logins.inc({ result }, 0);
  }

  /** One GET read answered as `result`. */
  readCacheRead(result: ReadCacheResult): void {
    this.readCache.inc({ result });
  }

  /** One request group answered with a lease, as `outcome`. */
  leaseServed(outcome: LeasedReadOutcome): void {
    this.leases.inc({ outcome });
  }

  /** One lease left the store. */
  leaseDropped(reason: LeaseDropReason): void {
    this.leaseDrops.inc({ reason });
  }

  /** One login ended. */
  login(result: 'success' | 'failure'): void {
    this.logins.inc({ result });
  }
}
