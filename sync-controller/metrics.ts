import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A provider name as a label value: a class names it, so an odd one is `invalid`. */
function providerLabel(provider: string): string {
  return /^[a-zA-Z0-9_-]{0,30}$/.test(provider) ? provider : 'invalid';
}

/** The SecretSync controller's Prometheus metrics (docs/metrics.md). One instance per process. */
export class SyncControllerMetrics {
  private readonly syncs: Counter<'result' | 'reason'>;
  private readonly duration: Histogram;
  private readonly apiRequests: Counter<'method' | 'code'>;
  private readonly providerCalls: Counter<'provider' | 'result'>;
  private readonly sharedMounts: Counter<'provider'>;
  private readonly leader: Gauge<'name'>;

  constructor(registry: Registry) {
    this.syncs = new Counter({
      name: 'secretsync_reconcile_total',
      help: 'SecretSync reconciles by result (synced, unchanged, failed) and condition reason of a failure',
      labelNames: ['result', 'reason'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'secretsync_reconcile_duration_seconds',
      help: 'Time to reconcile one SecretSync',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.providerCalls = new Counter({
      name: 'secretsync_provider_mount_total',
      help: 'Provider Mount calls made for SecretSyncs, by provider and result (ok, error)',
      labelNames: ['provider', 'result'],
      registers: [registry],
    });
    this.sharedMounts = new Counter({
      name: 'secretsync_provider_mount_shared_total',
      help: 'SecretSync reconciles answered by a provider Mount call made for another SecretSync with the identical request',
      labelNames: ['provider'],
      registers: [registry],
    });
    // client-go's leader election metric.
    this.leader = new Gauge({
      name: 'leader_election_master_status',
      help: 'Whether this replica leads (1) or not (0), by Lease name; absent without --leader-elect',
      labelNames: ['name'],
      registers: [registry],
    });
    // client-go's name, as the driver's.
    this.apiRequests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Kubernetes API requests by HTTP method and status code ("<error>": no answer)',
      labelNames: ['method', 'code'],
      registers: [registry],
    });
  }

  /** One reconcile's result. */
  reconciled(result: 'synced' | 'unchanged' | 'failed', reason: string, seconds: number): void {
    this.syncs.inc({ result, reason });
    this.duration.observe(seconds);
  }

  /** One provider Mount call. */
  providerCall(provider: string, ok: boolean): void {
    this.providerCalls.inc({ provider: providerLabel(provider), result: ok ? 'ok' : 'error' });
  }

  /** One reconcile answered by a Mount call made for another SecretSync. */
  providerShared(provider: string): void {
    this.sharedMounts.inc({ provider: providerLabel(provider) });
  }

  /** This replica started (true) or stopped (false) leading under the Lease `name`. */
  leading(name: string, leading: boolean): void {
    this.leader.set({ name }, leading ? 1 : 0);
  }

  /** One Kubernetes API request (the client's observer). */
  apiRequest(method: string, code: string): void {
    this.apiRequests.inc({ method, code });
  }
}
