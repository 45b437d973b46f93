import type { KubeApi } from './client/kube-api.js';
import { KubeApiError, resourcePath } from './client/kube-api.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { Sleep } from '../../lib/sleep.js';
import { type LeaseObservation, type LeaseSpec, leaseStep, releasedLease, RETRY_JITTER } from './lease-record.js';

/** Which Lease, and client-go's three timings. */
export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  /** This replica's holderIdentity: unique per process. */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The clocks and effects an elector uses; injected so unit tests run without waiting. */
export interface LeaderElectionDeps {
  readonly logger: Logger;
  readonly sleep: Sleep;
  readonly random: () => number;
  /** Monotonic milliseconds. */
  readonly monotonicMs: () => number;
  readonly now: () => Date;
  /** Told true when this replica starts leading, false when it stops. */
  readonly leading: (leading: boolean) => void;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** How a term of leadership ended. */
export type LeadershipEnd = 'stopped' | 'lost';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: acquire
 * by retrying every retry period (jittered), renew every retry period, and give
 * leadership up when no renewal succeeded for the renew deadline; on a clean stop the
 * Lease is released so another replica takes over at once.
 */
export class LeaderElector {
  private seen: LeaseObservation | undefined;
  private lastHolder = '';
  private isLeader = false;

  constructor(
    private readonly api: KubeApi,
    private readonly config: LeaderElectionConfig,
    private readonly deps: LeaderElectionDeps,
  ) {}

  private get path(): string {
    return resourcePath({
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      namespace: this.config.namespace,
      name: this.config.name,
    });
  }

  private get collection(): string {
    return resourcePath({
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      namespace: this.config.namespace,
    });
  }

  /** The Lease's namespace/name, for logs. */
  get lease(): string {
    return `${this.config.namespace}/${this.config.name}`;
  }

  /** Resolves once this replica leads; rejects with the signal's reason when it aborts first. */
  async acquire(signal: AbortSignal): Promise<void> {
    this.deps.logger.info('waiting to lead', { lease: this.lease, identity: this.config.identity });
    for (;;) {
      if (await this.tryAcquireOrRenew(signal)) break;
      const { retryPeriodMs } = this.config;
      await this.deps.sleep(retryPeriodMs + this.deps.random() * RETRY_JITTER * retryPeriodMs, signal);
    }
    this.isLeader = true;
    this.deps.logger.info('leading', { lease: this.lease, identity: this.config.identity });
    this.deps.leading(true);
  }

  /**
   * Renews until `signal` aborts ('stopped') or no renewal succeeded for the renew deadline
   * ('lost': another replica may lead by now, so the caller must stop working at once).
   */
  async hold(signal: AbortSignal): Promise<LeadershipEnd> {
    const { renewDeadlineMs, retryPeriodMs } = this.config;
    try {
      for (;;) {
        await this.deps.sleep(retryPeriodMs, signal);
        const deadline = this.deps.monotonicMs() + renewDeadlineMs;
        for (;;) {
          const left = deadline - this.deps.monotonicMs();
          if (
            left > 0 &&
            (await this.tryAcquireOrRenew(AbortSignal.any([signal, AbortSignal.timeout(Math.ceil(left))])))
          )
            break;
          if (signal.aborted) return 'stopped';
          if (this.deps.monotonicMs() >= deadline) {
            this.stopLeading();
            this.deps.logger.error('leadership lost: the Lease was not renewed within the renew deadline', {
              lease: this.lease,
              renewDeadlineMs,
            });
            return 'lost';
          }
          await this.deps.sleep(Math.min(retryPeriodMs, deadline - this.deps.monotonicMs()), signal);
        }
      }
    } catch (err) {
      if (signal.aborted) return 'stopped';
      throw err;
    }
  }

  /** Gives the Lease up when this replica still holds it (best effort, bounded by the renew deadline). */
  async release(): Promise<void> {
    if (!this.isLeader) return;
    this.stopLeading();
    const signal = AbortSignal.timeout(Math.ceil(this.config.renewDeadlineMs));
    try {
      const lease = await this.api.get<Lease>(this.path, undefined, signal);
      if (lease.spec?.holderIdentity !== this.config.identity) return;
      await this.api.replace(this.path, { ...lease, spec: releasedLease(lease.spec, this.deps.now()) }, signal);
      this.deps.logger.info('released the Lease', { lease: this.lease });
    } catch (err) {
      this.deps.logger.warn('could not release the Lease; another replica takes over when it expires', {
        lease: this.lease,
        error: (err as Error).message,
      });
    }
  }

  private stopLeading(): void {
    if (!this.isLeader) return;
    this.isLeader = false;
    this.deps.leading(false);
  }

  /** One read and, when the Lease is free, expired or ours, one write; false on any failure. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    try {
      const current = await this.read(signal);
      const step = leaseStep(current?.spec ?? (current ? {} : undefined), this.seen, {
        identity: this.config.identity,
        leaseDurationSeconds: this.config.leaseDurationMs / 1000,
        monotonicMs: this.deps.monotonicMs(),
        wallClock: this.deps.now(),
      });
      this.seen = step.observation;
      if (step.action === 'held') {
        if (step.holder !== this.lastHolder)
          this.deps.logger.info('the Lease is held by another replica', { lease: this.lease, holder: step.holder });
        this.lastHolder = step.holder;
        return false;
      }
      const body: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { ...current?.metadata, name: this.config.name, namespace: this.config.namespace },
        spec: step.spec,
      };
      await (current === undefined
        ? this.api.create(this.collection, body, signal)
        : this.api.replace(this.path, body, signal));
      this.lastHolder = this.config.identity;
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      // 409: another replica wrote first; it shows at the next read.
      if (!(err instanceof KubeApiError && err.code === 409))
        this.deps.logger.warn('could not read or write the Lease', {
          lease: this.lease,
          error: (err as Error).message,
        });
      return false;
    }
  }

  private async read(signal: AbortSignal): Promise<Lease | undefined> {
    try {
      return await this.api.get<Lease>(this.path, undefined, signal);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }
}
