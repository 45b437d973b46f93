import { createHash } from 'node:crypto';
import type { MountRequest } from '../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../proto/gen/v1alpha1/MountResponse.js';

/**
 * How long a Mount response is kept for other SecretSyncs with the identical request:
 * dropped once no reconcile used it for `idleMs`, and at the latest `maxAgeMs` after
 * the call started. Only in memory, never logged.
 */
export interface SharingPolicy {
  readonly idleMs: number;
  readonly maxAgeMs: number;
}

/**
 * The controller's policy. A round's reconciles of one group are spread over the round
 * (interleaved with other groups', each paying upstream's PBKDF2 hash on a busy CPU): 15 s
 * between two uses covers that; a round longer than 2 minutes makes one more call per group.
 */
export const SHARING_POLICY: SharingPolicy = Object.freeze({ idleMs: 15_000, maxAgeMs: 120_000 });

/** One provider Mount call as the sharing decisions see it (times from one monotonic clock, ms). */
export interface MountCallState {
  readonly startedAt: number;
  /** undefined while the call is in flight. */
  readonly settledAt: number | undefined;
  readonly lastUsedAt: number;
}

/**
 * True when the answer of `call` may serve a reconcile triggered at `triggeredAt`: the call
 * started after the trigger (a spec change, refresh, class change or poll is never
 * answered with data fetched before it), is still in flight or was used recently, and is
 * younger than the policy's most.
 */
export function mayShare(call: MountCallState, triggeredAt: number, now: number, policy: SharingPolicy): boolean {
  if (call.startedAt < triggeredAt) return false;
  if (now - call.startedAt > policy.maxAgeMs) return false;
  return call.settledAt === undefined || now - call.lastUsedAt <= policy.idleMs;
}

/** When a settled call's answer is dropped: idle for `idleMs`, or `maxAgeMs` after it started, whichever is first. */
export function retainedUntil(call: MountCallState, policy: SharingPolicy): number {
  return Math.min(call.lastUsedAt + policy.idleMs, call.startedAt + policy.maxAgeMs);
}

/**
 * Identifies a Mount request: equal for requests with the same provider, attributes (class
 * parameters, pod, namespace, service account, tokens), secrets, path, permission and
 * object versions. A digest, so the map holds no token.
 */
export function mountRequestKey(provider: string, request: MountRequest): string {
  const versions = (request.current_object_version ?? []).map((v) => [v.id ?? '', v.version ?? '']);
  const fields = [
    provider,
    request.attributes ?? '',
    request.secrets ?? '',
    request.target_path ?? '',
    request.permission ?? '',
    versions,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

type MountCall = (provider: string, request: MountRequest) => Promise<MountResponse__Output>;

interface Entry extends MountCallState {
  readonly answer: Promise<MountResponse__Output>;
  settledAt: number | undefined;
  lastUsedAt: number;
  timer?: NodeJS.Timeout;
}

/**
 * One provider Mount for SecretSyncs whose Mount requests are identical (same namespace,
 * class parameters, service account and tokens): a reconcile that starts while such a call
 * is in flight, or shortly after it answered, gets its answer instead of calling again, when
 * the call started after the reconcile's trigger (mayShare). A failed call is shared only
 * with those that waited for it, never kept.
 */
export class SharedMounts {
  private readonly calls = new Map<string, Entry>();

  constructor(
    private readonly call: MountCall,
    /** A reconcile was answered by a call made for another. */
    private readonly onShared: (provider: string) => void,
    private readonly policy: SharingPolicy = SHARING_POLICY,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The provider's answer to `request` for a reconcile triggered at `triggeredAt` (the `now` clock). */
  mount(provider: string, request: MountRequest, triggeredAt: number): Promise<MountResponse__Output> {
    const key = mountRequestKey(provider, request);
    const now = this.now();
    const known = this.calls.get(key);
    if (known && mayShare(known, triggeredAt, now, this.policy)) {
      known.lastUsedAt = now;
      this.onShared(provider);
      return known.answer;
    }
    if (known) this.drop(key, known);
    const answer = this.call(provider, request);
    const entry: Entry = { startedAt: now, settledAt: undefined, lastUsedAt: now, answer };
    this.calls.set(key, entry);
    answer.then(
      () => {
        entry.settledAt = this.now();
        entry.lastUsedAt = entry.settledAt;
        this.expireLater(key, entry);
      },
      () => this.drop(key, entry),
    );
    return answer;
  }

  /** How many answers are held (in flight or kept). */
  get size(): number {
    return this.calls.size;
  }

  /** Drops every answer (the controller stops). */
  clear(): void {
    for (const [key, entry] of this.calls) this.drop(key, entry);
  }

  private expireLater(key: string, entry: Entry): void {
    if (this.calls.get(key) !== entry) return;
    const wait = retainedUntil(entry, this.policy) - this.now();
    if (wait <= 0) {
      this.drop(key, entry);
      return;
    }
    entry.timer = setTimeout(() => this.expireLater(key, entry), wait);
    entry.timer.unref();
  }

  private drop(key: string, entry: Entry): void {
    clearTimeout(entry.timer);
    if (this.calls.get(key) === entry) this.calls.delete(key);
  }
}
