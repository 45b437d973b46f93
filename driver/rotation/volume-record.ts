import type { PodRef, PublishRequest } from '../publish/publish-request.js';
import { SERVICE_ACCOUNT_TOKENS_KEY } from '../publish/mount-request.js';
import { MAX_MOUNT_GROUP } from '../volume/ownership.js';

/**
 * The file in a local-mode target directory that lets a restarted driver rotate the
 * volume. Providers cannot write it: their paths may not start with "..". It
 * must not look like a payload directory (`..<digits>_…`), which the atomic writer
 * deletes, and it lives in the volume so an unpublish removes it with everything else.
 */
export const VOLUME_RECORD_FILE = '..secrets-store-volume.json';

/** Format version of the record; a record of another version is ignored. */
const RECORD_VERSION = 1;

/**
 * What a restarted driver needs to refresh a volume as its client last published it:
 * never a secret. `secrets` and service-account tokens are left out; `withheld` says
 * there were some, so rotation waits for the next publish instead of calling the
 * provider without them.
 */
export interface VolumeRecord {
  /** The driver that published it (name and CSI socket): other drivers on the host leave it alone. */
  readonly owner: string;
  readonly targetPath: string;
  readonly volumeId: string;
  readonly spcName: string;
  readonly provider: string;
  readonly pod: PodRef;
  /** volume_context without service-account tokens. */
  readonly volumeContext: Readonly<Record<string, string>>;
  /** True when the publish carried secrets or tokens (not recorded). */
  readonly withheld: boolean;
  /** The publish's volume_mount_group (the pod's fsGroup), so rotation writes for the same group. */
  readonly mountGroup?: number;
}

/** The owner string of a driver: its name and CSI socket path, stable across restarts. */
export function recordOwner(driverName: string, socketPath: string): string {
  return `${driverName} ${socketPath}`;
}

/** The record of a publish: the request minus everything secret. */
export function volumeRecordOf(request: PublishRequest, provider: string, owner: string): VolumeRecord {
  const { [SERVICE_ACCOUNT_TOKENS_KEY]: tokens, ...volumeContext } = request.volumeContext;
  return {
    owner,
    targetPath: request.targetPath,
    volumeId: request.volumeId,
    spcName: request.spcName,
    provider,
    pod: {
      name: request.pod.name,
      namespace: request.pod.namespace,
      uid: request.pod.uid,
      serviceAccountName: request.pod.serviceAccountName,
    },
    volumeContext,
    withheld: tokens !== undefined || Object.keys(request.secrets).length > 0,
    ...(request.mountGroup === undefined ? {} : { mountGroup: request.mountGroup }),
  };
}

/**
 * The record as written: stable JSON (sorted volume context), so equal records compare
 * equal as text. `mountGroup` only when set: a record without one reads as before.
 */
export function serializeVolumeRecord(record: VolumeRecord): string {
  const volumeContext = Object.fromEntries(
    Object.entries(record.volumeContext).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const { owner, targetPath, volumeId, spcName, provider, pod, withheld, mountGroup } = record;
  return `${JSON.stringify({ version: RECORD_VERSION, owner, targetPath, volumeId, spcName, provider, pod, volumeContext, withheld, mountGroup }, null, 2)}\n`;
}

function stringField(obj: Record<string, unknown>, key: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw new Error(`${key} is not a string`);
  return v;
}

function objectField(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = obj[key];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${key} is not an object`);
  return v as Record<string, unknown>;
}

/** Parses a record file; throws naming the first field that is wrong (never quoting values). */
export function parseVolumeRecord(text: string): VolumeRecord {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('not a JSON object');
  const obj = doc as Record<string, unknown>;
  if (obj['version'] !== RECORD_VERSION) throw new Error(`version is not ${RECORD_VERSION}`);
  const pod = objectField(obj, 'pod');
  const context = objectField(obj, 'volumeContext');
  const volumeContext: Record<string, string> = {};
  for (const key of Object.keys(context)) volumeContext[key] = stringField(context, key);
  if (SERVICE_ACCOUNT_TOKENS_KEY in volumeContext) throw new Error(`volumeContext holds ${SERVICE_ACCOUNT_TOKENS_KEY}`);
  if (typeof obj['withheld'] !== 'boolean') throw new Error('withheld is not a boolean');
  const mountGroup = obj['mountGroup'];
  if (
    mountGroup !== undefined &&
    !(Number.isInteger(mountGroup) && (mountGroup as number) >= 0 && (mountGroup as number) <= MAX_MOUNT_GROUP)
  ) {
    throw new Error(`mountGroup is not a group id from 0 to ${MAX_MOUNT_GROUP}`);
  }
  const record: VolumeRecord = {
    owner: stringField(obj, 'owner'),
    targetPath: stringField(obj, 'targetPath'),
    volumeId: stringField(obj, 'volumeId'),
    spcName: stringField(obj, 'spcName'),
    provider: stringField(obj, 'provider'),
    pod: {
      name: stringField(pod, 'name'),
      namespace: stringField(pod, 'namespace'),
      uid: stringField(pod, 'uid'),
      serviceAccountName: stringField(pod, 'serviceAccountName'),
    },
    volumeContext,
    withheld: obj['withheld'],
    ...(mountGroup === undefined ? {} : { mountGroup: mountGroup as number }),
  };
  if (
    !record.targetPath.startsWith('/') ||
    record.spcName === '' ||
    record.pod.name === '' ||
    record.pod.namespace === ''
  ) {
    throw new Error('targetPath, spcName, pod.name or pod.namespace is empty or relative');
  }
  return record;
}

/** The publish request rotation re-sends for a recorded volume (no secrets: see `withheld`). */
export function requestOfRecord(record: VolumeRecord): PublishRequest {
  return {
    volumeId: record.volumeId,
    targetPath: record.targetPath,
    spcName: record.spcName,
    pod: record.pod,
    volumeContext: record.volumeContext,
    secrets: {},
    ...(record.mountGroup === undefined ? {} : { mountGroup: record.mountGroup }),
  };
}
