import { SscError, toSscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import type { Sleep } from '../../lib/sleep.js';
import type { SecretObject } from '../spc/secret-provider-class.js';
import { buildSecretData, secretDataDigest } from './secret-data.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import { DATA_DIGEST_ANNOTATION, MANAGED_LABEL, USED_SECRET_LABEL } from '../k8s/constants.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { OwnerReference, Secret } from '../k8s/client/types.js';
import { corePath } from '../k8s/resource-paths.js';
import type { SecretCache } from './managed-secret-watches.js';
import { readMountedFiles } from './mounted-files.js';

/** One Secret's syncs: the last in line, and what the last finished one wanted and got. */
interface SecretQueue {
  tail: Promise<void>;
  last?: { readonly want: string; readonly outcome?: SecretSyncOutcome; readonly error?: SscError };
}

function sorted(record: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The API calls Secret sync makes (a port: unit tests script it). */
export type SecretApi = Pick<KubeApi, 'get' | 'create' | 'replace' | 'patch'>;

/**
 * The outcome of syncing one Secret: `owned` when only owner references were added
 * (the data already matched), `labelled` when only the driver's own labels were added (a
 * Secret synced before the driver set `used=true`: by upstream, or by an earlier version
 * of this driver), `conflict` when a Secret of that name is not ours.
 */
export type SecretSyncOutcome = 'created' | 'updated' | 'owned' | 'labelled' | 'unchanged' | 'conflict';

/**
 * The labels the driver sets on every Secret it syncs: upstream's `managed=true`, and
 * `used=true`, so the one watch per namespace of `used=true` Secrets (nodePublishSecretRef
 * Secrets, as upstream labels them) also holds the synced ones (node-watches.ts). They
 * win over the same keys in secretObjects' labels.
 */
export const SYNCED_SECRET_LABELS: Readonly<Record<string, string>> = Object.freeze({
  [MANAGED_LABEL]: 'true',
  [USED_SECRET_LABEL]: 'true',
});

/** Observes sync timing for metrics (sync_k8s_secret_total, k8s_secret_duration_sec). */
export type SecretSyncObserver = (provider: string, seconds: number) => void;

/**
 * Attempts for a Secret write that fails transiently (5xx, unreachable, or a 409: another
 * node wrote the Secret between our read and our write; the next attempt reads it again).
 */
const ATTEMPTS = 4;
const FIRST_BACKOFF_MS = 200;

function encode(data: ReadonlyMap<string, Buffer>): Record<string, string> {
  return Object.fromEntries([...data].map(([k, v]) => [k, v.toString('base64')]));
}

function digestOfSecret(secret: Secret): string {
  return secretDataDigest(new Map(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])));
}

/** The wanted owners missing from `existing` (matched by uid, as the garbage collector does). */
export function missingOwners(
  existing: readonly OwnerReference[] | undefined,
  wanted: readonly OwnerReference[],
): OwnerReference[] {
  const have = new Set((existing ?? []).map((o) => o.uid));
  return wanted.filter((o) => o.uid !== '' && !have.has(o.uid));
}

function hasAll(actual: Record<string, string> | undefined, wanted: Readonly<Record<string, string>>): boolean {
  return Object.entries(wanted).every(([k, v]) => actual?.[k] === v);
}

/** `labels` without the keys the driver sets itself (SYNCED_SECRET_LABELS wins over them anyway). */
function withoutSyncedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([k]) => !(k in SYNCED_SECRET_LABELS)));
}

function isTransient(err: unknown): boolean {
  const kind = toSscError(err).kind;
  return kind === 'aborted' || kind === 'unavailable';
}

/**
 * Keeps Kubernetes Secrets in step with mounted files: creates a missing
 * Secret; updates one only when the data digest changed, keeping foreign labels and
 * annotations; adds the caller's owners to its owner references without removing any,
 * so the garbage collector deletes it only when no owner is left;
 * never touches a Secret without the managed label (outcome `conflict`). Failures throw
 * an SscError naming the Secret; reporting them is the caller's business.
 */
export class SecretSyncer {
  /** Per Secret: the tail of its queue of syncs, and the last one that finished. */
  private readonly queues = new Map<string, SecretQueue>();
  /** Secrets the API would not label used=true (logged once each). */
  private readonly unlabelled = new Set<string>();

  constructor(
    private readonly api: SecretApi,
    private readonly logger: Logger,
    private readonly sleep: Sleep,
    /** Reads the mounted files a SecretObject needs (a port: unit tests give the files directly). */
    private readonly readFiles: (
      targetPath: string,
      object: SecretObject,
    ) => Promise<Map<string, Buffer>> = readMountedFiles,
    /** The managed Secrets watched in this node's namespaces: a first attempt reads from here instead of a GET. */
    private readonly cache?: SecretCache,
  ) {}

  /**
   * Syncs one SecretObject from the files mounted at `targetPath`. Syncs of one Secret run
   * in arrival order, one at a time (older data never overwrites newer). Volumes sharing a
   * Secret that rotate together would each read it and write the same: a sync that wants
   * exactly what a sync finished while it waited (data, type, labels, annotations,
   * owners) is `unchanged` without an API call; after that one's non-transient failure it
   * fails with the same error, after a conflict it tries itself.
   */
  async sync(
    pod: PodRef,
    targetPath: string,
    object: SecretObject,
    owners: readonly OwnerReference[],
    dropMissing = false,
  ): Promise<SecretSyncOutcome> {
    const data = buildSecretData(object, await this.readFiles(targetPath, object), { dropMissing });
    const digest = secretDataDigest(data);
    const want = JSON.stringify([
      digest,
      object.type,
      sorted(object.labels),
      sorted(object.annotations),
      owners.map((o) => o.uid).sort(),
    ]);
    const key = `${pod.namespace}/${object.secretName}`;
    this.cache?.ensure(pod.namespace);
    const queue: SecretQueue = this.queues.get(key) ?? { tail: Promise.resolve() };
    this.queues.set(key, queue);
    // Syncs finish in queue order: a `last` other than this one finished while we waited.
    const lastBefore = queue.last;
    const turn = queue.tail;
    let release = () => undefined as void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.tail = mine;
    await turn;
    try {
      const last = queue.last;
      if (last && last !== lastBefore && last.want === want) {
        if (last.outcome !== undefined && last.outcome !== 'conflict') return 'unchanged';
        if (last.error && !isTransient(last.error)) throw last.error;
      }
      try {
        const outcome = await this.syncData(pod, object, data, digest, owners);
        queue.last = { want, outcome };
        return outcome;
      } catch (err) {
        queue.last = { want, error: toSscError(err) };
        throw err;
      }
    } finally {
      release();
      if (queue.tail === mine) this.queues.delete(key);
    }
  }

  /** Creates or updates the Secret, retrying transient failures (each attempt reads it again). */
  private async syncData(
    pod: PodRef,
    object: SecretObject,
    data: Map<string, Buffer>,
    digest: string,
    owners: readonly OwnerReference[],
  ): Promise<SecretSyncOutcome> {
    for (let attempt = 1, delay = FIRST_BACKOFF_MS; ; attempt++, delay *= 2) {
      try {
        // A retry (after a 409: the cache was behind another writer) reads the Secret itself.
        return await this.apply(pod, object, data, digest, owners, attempt === 1);
      } catch (err) {
        if (attempt >= ATTEMPTS || !isTransient(err)) throw toSscError(err);
        await this.sleep(delay);
      }
    }
  }

  private async apply(
    pod: PodRef,
    object: SecretObject,
    data: Map<string, Buffer>,
    digest: string,
    owners: readonly OwnerReference[],
    fromCache: boolean,
  ): Promise<SecretSyncOutcome> {
    const { namespace } = pod;
    const name = object.secretName;
    const cached = fromCache ? this.cache?.lookup(namespace, name) : undefined;
    const existing = cached ? cached.secret : await this.read(namespace, name);
    if (!existing) return this.create(namespace, object, data, digest, owners);
    if (existing.metadata?.labels?.[MANAGED_LABEL] !== 'true') return 'conflict';
    const missing = missingOwners(existing.metadata.ownerReferences, owners);
    const ownerReferences = [...(existing.metadata.ownerReferences ?? []), ...missing];
    const labels = { ...existing.metadata.labels, ...object.labels, ...SYNCED_SECRET_LABELS };
    // Compared with the Secret's actual data (not our annotation): an edit by hand is undone.
    if (
      digestOfSecret(existing) === digest &&
      hasAll(existing.metadata.annotations, object.annotations) &&
      hasAll(existing.metadata.labels, withoutSyncedLabels(object.labels))
    ) {
      // The data is current. The driver's own labels may be missing (a Secret synced before it set used=true).
      if (hasAll(existing.metadata.labels, SYNCED_SECRET_LABELS))
        return missing.length === 0 ? 'unchanged' : this.patchMetadata(existing, { ownerReferences });
      return missing.length === 0
        ? this.label(existing, labels)
        : this.patchMetadata(existing, { ownerReferences, labels });
    }
    if ((existing.type ?? 'Opaque') !== object.type) {
      throw new SscError(
        'failed-precondition',
        `Secret ${namespace}/${name} has type ${existing.type ?? 'Opaque'} but secretObjects asks for ${object.type}; delete it to let the driver recreate it`,
        { reason: 'SecretTypeMismatch' },
      );
    }
    const body: Secret = {
      ...existing,
      metadata: {
        ...existing.metadata,
        labels,
        annotations: { ...existing.metadata.annotations, ...object.annotations, [DATA_DIGEST_ANNOTATION]: digest },
        ownerReferences,
      },
      data: encode(data),
    };
    const updated = await this.api.replace<Secret>(corePath('secrets', namespace, name), body).catch((err: unknown) => {
      throw fromKubeError(err, `update Secret ${namespace}/${name}`);
    });
    this.remember(updated);
    this.logger.info('Secret updated', { secret: `${namespace}/${name}`, keys: data.size });
    return 'updated';
  }

  /** Creates the Secret, labelled as ours and owned by `owners`. */
  private async create(
    namespace: string,
    object: SecretObject,
    data: Map<string, Buffer>,
    digest: string,
    owners: readonly OwnerReference[],
  ): Promise<SecretSyncOutcome> {
    const name = object.secretName;
    const body: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace,
        labels: { ...object.labels, ...SYNCED_SECRET_LABELS },
        annotations: { ...object.annotations, [DATA_DIGEST_ANNOTATION]: digest },
        // An owner without a uid (a pod status object not yet stored) would make the API refuse the Secret.
        ownerReferences: owners.filter((o) => o.uid !== ''),
      },
      type: object.type,
      data: encode(data),
    };
    const created = await this.api.create<Secret>(corePath('secrets', namespace), body).catch((err: unknown) => {
      throw fromKubeError(err, `create Secret ${namespace}/${name}`);
    });
    this.remember(created);
    this.logger.info('Secret created', { secret: `${namespace}/${name}`, keys: data.size });
    return 'created';
  }

  /**
   * Adds the driver's own labels to a Secret whose data, owners and class labels are
   * current. A refusal that retrying cannot fix (a role without patch, an admission
   * policy) is logged once per Secret and the Secret counts as unchanged: its data is what
   * the volume holds, and the label only spares a request per round.
   */
  private async label(existing: Secret, labels: Record<string, string>): Promise<SecretSyncOutcome> {
    try {
      return await this.patchMetadata(existing, { labels });
    } catch (err) {
      const e = toSscError(err);
      if (isTransient(e)) throw e;
      const key = `${existing.metadata?.namespace ?? ''}/${existing.metadata?.name ?? ''}`;
      if (!this.unlabelled.has(key)) {
        this.unlabelled.add(key);
        this.logger.warn(
          'Secret left without the used=true label: it is not in the watch, so each sync of it asks the API',
          {
            secretName: key,
            reason: e.reason,
            error: e.message,
          },
        );
      }
      return 'unchanged';
    }
  }

  /**
   * Sets the merged owner references and/or labels without touching the data: one JSON
   * patch, made conditional on the resourceVersion read (the API answers 409 when another
   * node changed the Secret meanwhile; the caller then reads it again, so both nodes'
   * owners stay). `owned` when it added owners, else `labelled`.
   */
  private async patchMetadata(
    existing: Secret,
    set: { readonly ownerReferences?: OwnerReference[]; readonly labels?: Record<string, string> },
  ): Promise<SecretSyncOutcome> {
    const { namespace = '', name = '', resourceVersion = '' } = existing.metadata ?? {};
    const { ownerReferences, labels } = set;
    const added = ownerReferences !== undefined;
    const patched = await this.api
      .patch<Secret>(corePath('secrets', namespace, name), [
        { op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion },
        ...(added ? [{ op: 'add', path: '/metadata/ownerReferences', value: ownerReferences }] : []),
        ...(labels ? [{ op: 'add', path: '/metadata/labels', value: labels }] : []),
      ])
      .catch((err: unknown) => {
        throw fromKubeError(err, `${added ? 'add owner references to' : 'label'} Secret ${namespace}/${name}`);
      });
    this.remember(patched);
    if (!added) {
      this.logger.info('Secret labelled', {
        secretName: `${namespace}/${name}`,
        labels: Object.keys(SYNCED_SECRET_LABELS),
      });
      return 'labelled';
    }
    this.logger.info('Secret owners added', {
      secretName: `${namespace}/${name}`,
      owners: ownerReferences.map((o) => `${o.kind}/${o.name}`),
      ...(labels ? { labels: Object.keys(SYNCED_SECRET_LABELS) } : {}),
    });
    return 'owned';
  }

  /** Hands a Secret the API answered a write with to the cache (a scripted API may answer nothing). */
  private remember(secret: Secret | undefined): void {
    if (secret?.metadata) this.cache?.remember(secret);
  }

  private async read(namespace: string, name: string): Promise<Secret | undefined> {
    try {
      return await this.api.get<Secret>(corePath('secrets', namespace, name));
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw fromKubeError(err, `get Secret ${namespace}/${name}`);
    }
  }
}
