// KV v1 and v2 behind one `secretPath`. HashiCorp's provider needs the KV v2 API path
// (`secret/data/db`); here `secret/db` works too: the provider asks Vault which mount a
// path is under (`GET sys/internal/ui/mounts/<path>`, the endpoint Vault's own CLI uses
// for `vault kv get`) and inserts `data/` for a KV v2 mount, unless the path already
// names a KV v2 API (`data/`, `metadata/`, `subkeys/`, `config`).
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import type { VaultObject } from './objects.js';

/** What Vault says about the mount a path is under. */
export interface MountInfo {
  /** The mount's path, without slashes at either end (`secret`, `team/kv`). */
  readonly path: string;
  /** `kv`, `pki`, `database`, … */
  readonly type: string;
  /** KV version: 2 for a KV v2 mount, 1 for KV v1 (and for every other engine). */
  readonly kvVersion: 1 | 2;
}

/** KV v2 API paths under a mount that are already in API form. */
const KV2_API = /^(?:data|metadata|subkeys)\/|^config$/;

/** The MountInfo in a `sys/internal/ui/mounts/<path>` response body, or undefined when it holds none. */
export function parseMountInfo(body: unknown): MountInfo | undefined {
  const data = (body as { data?: unknown } | undefined)?.data as
    { path?: unknown; type?: unknown; options?: { version?: unknown } | null } | undefined;
  if (typeof data !== 'object' || data === null || typeof data.path !== 'string' || typeof data.type !== 'string')
    return undefined;
  const path = data.path.replace(/^\/+|\/+$/g, '');
  const isKv = data.type === 'kv' || data.type === 'generic';
  return { path, type: data.type, kvVersion: isKv && String(data.options?.version ?? '1') === '2' ? 2 : 1 };
}

/** The part of `path` under `mount`, or undefined when `path` is not under it. */
function under(path: string, mount: string): string | undefined {
  if (mount === '') return path;
  return path.startsWith(`${mount}/`) ? path.slice(mount.length + 1) : undefined;
}

/** How one object is read: the API path and whether the answer is a KV v2 `data` envelope. */
export interface ReadPlan {
  readonly path: string;
  readonly kv2Data: boolean;
}

/**
 * The API path to call for `object` under `mount` (undefined: the mount is unknown, so
 * the path is called as written). Only GETs are rewritten: a PUT or POST goes where it
 * was written.
 */
export function readPlan(object: VaultObject, mount: MountInfo | undefined): ReadPlan {
  if (!mount || mount.kvVersion !== 2 || object.method !== 'GET') return { path: object.path, kv2Data: false };
  const rest = under(object.path, mount.path);
  if (rest === undefined || rest === '') return { path: object.path, kv2Data: false };
  if (KV2_API.test(rest)) return { path: object.path, kv2Data: rest.startsWith('data/') };
  return { path: `${mount.path}/data/${rest}`, kv2Data: true };
}

/** The query string of a read: `version` first (when set), then the other parameters of `secretPath`. */
export function readQuery(object: VaultObject): string {
  const params = new URLSearchParams();
  if (object.version !== undefined) params.append('version', String(object.version));
  for (const [k, v] of object.query) params.append(k, v);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function where(object: VaultObject): string {
  return `secret ${quoted(object.secretPath, 160)}${object.version !== undefined ? ` version ${object.version}` : ''}`;
}

/**
 * Why a KV v2 answer holds no data, for a NOT_FOUND naming the path: a soft-deleted or
 * destroyed version answers `data: null` with its metadata (HTTP 404 in Vault and
 * OpenBao, 200 in old Vaults). Undefined when the body is not such an answer.
 */
export function deletedVersion(body: unknown): 'deleted' | 'destroyed' | undefined {
  const data = (body as { data?: unknown } | undefined)?.data as
    { data?: unknown; metadata?: { deletion_time?: unknown; destroyed?: unknown } | null } | undefined;
  const meta = data?.metadata;
  if (typeof meta !== 'object' || meta === null || (data?.data !== null && data?.data !== undefined)) return undefined;
  if (meta.destroyed === true) return 'destroyed';
  if (typeof meta.deletion_time === 'string' && meta.deletion_time !== '') return 'deleted';
  return undefined;
}

/**
 * The secret's data in a successful answer: `data.data` of a KV v2 read, else `data`.
 * Throws NOT_FOUND naming the path when there is none (a deleted version, an empty answer).
 */
export function secretData(object: VaultObject, plan: ReadPlan, body: unknown): Readonly<Record<string, unknown>> {
  const deleted = plan.kv2Data ? deletedVersion(body) : undefined;
  if (deleted) throw deletedError(object, deleted);
  const outer = (body as { data?: unknown } | undefined)?.data;
  const data = plan.kv2Data && typeof outer === 'object' && outer !== null ? (outer as { data?: unknown }).data : outer;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new SscError('not-found', `${where(object)} holds no data`, { reason: 'SecretNotFound' });
  }
  return data as Record<string, unknown>;
}

/** NOT_FOUND for a deleted or destroyed KV v2 version, naming the path. */
export function deletedError(object: VaultObject, how: 'deleted' | 'destroyed'): SscError {
  return new SscError('not-found', `${where(object)} was ${how} in Vault (KV v2); undelete it or write a new version`, {
    reason: 'SecretVersionDeleted',
  });
}
