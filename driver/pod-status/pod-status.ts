import { SscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import { sortVersions } from '../volume/metadata.js';
import type { ObjectVersion } from '../volume/payload.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import { NODE_NAME_LABEL, SECRETS_STORE_GROUP, SECRETS_STORE_VERSION } from '../k8s/constants.js';
import { podStatusPath } from '../k8s/resource-paths.js';

/** What the driver records about one published volume. */
export interface PodStatusRecord {
  readonly pod: PodRef;
  readonly spcName: string;
  readonly nodeId: string;
  readonly targetPath: string;
  readonly objects: readonly ObjectVersion[];
  readonly mountTime: Date;
}

/** A SecretProviderClassPodStatus as the driver writes it. */
export interface PodStatusObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: { apiVersion: string; kind: string; name: string; uid: string }[];
    resourceVersion?: string;
    uid?: string;
  };
  status: {
    podName: string;
    secretProviderClassName: string;
    mounted: boolean;
    targetPath: string;
    objects: { id: string; version: string }[];
    lastMountTime: string;
    lastError: string;
    /** Why the class's Secrets could not be synced (absent or "" when they were); see recordSecretSyncError. */
    secretSyncError?: string;
  };
}

/** Upstream's object name: `<pod>-<namespace>-<class>`. */
export function podStatusName(pod: PodRef, spcName: string): string {
  return `${pod.name}-${pod.namespace}-${spcName}`;
}

/**
 * The SecretProviderClassPodStatus for a published volume: upstream's name,
 * node label, owner reference to the Pod, objects sorted by id; plus our optional
 * lastMountTime and lastError, which upstream readers ignore.
 */
export function buildPodStatus(record: PodStatusRecord): PodStatusObject {
  return {
    apiVersion: `${SECRETS_STORE_GROUP}/${SECRETS_STORE_VERSION}`,
    kind: 'SecretProviderClassPodStatus',
    metadata: {
      name: podStatusName(record.pod, record.spcName),
      namespace: record.pod.namespace,
      labels: { [NODE_NAME_LABEL]: record.nodeId },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: record.pod.name, uid: record.pod.uid }],
    },
    status: {
      podName: record.pod.name,
      secretProviderClassName: record.spcName,
      mounted: true,
      targetPath: record.targetPath,
      objects: sortVersions(record.objects).map((o) => ({ id: o.id, version: o.version })),
      lastMountTime: record.mountTime.toISOString(),
      lastError: '',
    },
  };
}

/** Reads the pod status object of a volume, if there is one. */
export async function readPodStatus(api: KubeApi, pod: PodRef, spcName: string): Promise<PodStatusObject | undefined> {
  const name = podStatusName(pod, spcName);
  try {
    return await api.get<PodStatusObject>(podStatusPath(pod.namespace, name));
  } catch (err) {
    if (httpStatusOf(err) === 404) return undefined;
    throw fromKubeError(err, `get SecretProviderClassPodStatus ${pod.namespace}/${name}`);
  }
}

/** Tries before giving up on update conflicts (another writer changed the object). */
const CONFLICT_ATTEMPTS = 3;

/**
 * Creates or updates SecretProviderClassPodStatus objects. An existing object of the
 * same name (from another node, or an earlier pod with the same name) is taken over:
 * its labels, owner and status are replaced, as the pod now lives here.
 */
export class PodStatusWriter {
  constructor(
    private readonly api: KubeApi,
    private readonly logger: Logger,
    /** Told of every object written (the pod status watch remembers it before its event arrives). */
    private readonly onStored: (stored: PodStatusObject) => void = () => undefined,
  ) {}

  /**
   * Writes the status for a published volume; returns the stored object (with its uid).
   * With `likelyExists` (a republish or a rotation: the first publish created it) it is one
   * JSON patch instead of create, 409, get and replace; a missing object falls back to those.
   */
  async record(record: PodStatusRecord, options: { likelyExists?: boolean } = {}): Promise<PodStatusObject> {
    const stored = await this.write(record, options);
    this.onStored(stored);
    return stored;
  }

  private async write(record: PodStatusRecord, options: { likelyExists?: boolean }): Promise<PodStatusObject> {
    const desired = buildPodStatus(record);
    const { name, namespace } = desired.metadata;
    const what = `write SecretProviderClassPodStatus ${namespace}/${name}`;
    if (!record.pod.uid)
      throw new SscError(
        'invalid-argument',
        `volume attribute csi.storage.k8s.io/pod.uid is missing: set podInfoOnMount: true on the CSIDriver`,
        { reason: 'InvalidRequest' },
      );
    if (options.likelyExists) {
      const patched = await this.patchExisting(desired, what);
      if (patched) return patched;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.api.create<PodStatusObject>(podStatusPath(namespace), desired);
      } catch (err) {
        if (httpStatusOf(err) !== 409) throw fromKubeError(err, what);
      }
      try {
        const existing = await this.api.get<PodStatusObject>(podStatusPath(namespace, name));
        const previousNode = existing.metadata.labels?.[NODE_NAME_LABEL];
        if (previousNode && previousNode !== record.nodeId)
          this.logger.info('taking over SecretProviderClassPodStatus from another node', {
            name,
            namespace,
            previousNode,
          });
        const body = {
          ...desired,
          metadata: { ...desired.metadata, resourceVersion: existing.metadata.resourceVersion },
        };
        return await this.api.replace<PodStatusObject>(podStatusPath(namespace, name), body);
      } catch (err) {
        const status = httpStatusOf(err);
        // 404: deleted between our create and get; 409: changed in between. Both: start over.
        if ((status === 409 || status === 404) && attempt < CONFLICT_ATTEMPTS) continue;
        throw fromKubeError(err, what);
      }
    }
  }

  /**
   * Sets status, our labels and the owner on an existing object in one JSON patch ("add"
   * replaces a member that exists; other labels stay). Undefined when there is no such
   * object (404) or it lacks the labels map the patch adds into (422): the caller creates.
   */
  private async patchExisting(desired: PodStatusObject, what: string): Promise<PodStatusObject | undefined> {
    const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
    const body = [
      { op: 'add', path: '/status', value: desired.status },
      ...Object.entries(desired.metadata.labels ?? {}).map(([key, value]) => ({
        op: 'add',
        path: `/metadata/labels/${pointer(key)}`,
        value,
      })),
      { op: 'add', path: '/metadata/ownerReferences', value: desired.metadata.ownerReferences ?? [] },
    ];
    try {
      return await this.api.patch<PodStatusObject>(
        podStatusPath(desired.metadata.namespace, desired.metadata.name),
        body,
      );
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 404 || status === 422) return undefined;
      throw fromKubeError(err, what);
    }
  }
}

/** Sets one string field of an existing pod status object's status; a missing object is fine. */
async function setStatusField(
  api: KubeApi,
  pod: PodRef,
  spcName: string,
  field: 'lastError' | 'secretSyncError',
  message: string,
): Promise<void> {
  const name = podStatusName(pod, spcName);
  try {
    await api.patch(podStatusPath(pod.namespace, name), [
      { op: 'add', path: `/status/${field}`, value: message.slice(0, 1024) },
    ]);
  } catch (err) {
    if (httpStatusOf(err) === 404) return;
    throw fromKubeError(err, `update SecretProviderClassPodStatus ${pod.namespace}/${name}`);
  }
}

/**
 * Sets status.lastError on an existing pod status object (a republish failed while the
 * old content stays mounted). A missing object is fine: nothing was recorded yet.
 */
export function recordPodStatusError(api: KubeApi, pod: PodRef, spcName: string, message: string): Promise<void> {
  return setStatusField(api, pod, spcName, 'lastError', message);
}

/**
 * Sets status.secretSyncError: why the volume's Secrets could not be synced ("" once they
 * were). The mount itself succeeded, so lastError stays as it is. A
 * missing object is fine: the volume's pod is gone or its publish not yet recorded.
 */
export function recordSecretSyncError(api: KubeApi, pod: PodRef, spcName: string, message: string): Promise<void> {
  return setStatusField(api, pod, spcName, 'secretSyncError', message);
}

/** Deletes the pod status object of a volume whose first publish failed (nothing left behind). */
export async function deletePodStatus(api: KubeApi, pod: PodRef, spcName: string): Promise<void> {
  const name = podStatusName(pod, spcName);
  try {
    await api.delete(podStatusPath(pod.namespace, name));
  } catch (err) {
    if (httpStatusOf(err) === 404) return;
    throw fromKubeError(err, `delete SecretProviderClassPodStatus ${pod.namespace}/${name}`);
  }
}
