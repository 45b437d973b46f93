import type { Secret } from '../driver/k8s/client/types.js';
import { buildSecretData } from '../driver/secret-sync/secret-data.js';
import { CONTROLLER_LABEL, SECRET_SYNC_API_VERSION, SECRET_SYNC_KIND, type SecretSync } from './secret-sync.js';
import { Reasons } from './conditions.js';

/** A check that failed before anything was fetched: the condition reason and upstream's message. */
export interface SpecProblem {
  readonly reason: string;
  readonly message: string;
}

/**
 * Upstream's check of the reserved label and annotation (`secrets-store.sync.x-k8s.io`):
 * the CRD's CEL rules refuse them already, this catches objects stored before them.
 */
export function reservedKeyProblem(ss: SecretSync): SpecProblem | undefined {
  const { labels = {}, annotations = {} } = ss.spec.secretObject;
  if ((labels[CONTROLLER_LABEL] ?? '') !== '')
    return {
      reason: Reasons.invalidLabel,
      message: `label ${CONTROLLER_LABEL} is reserved for use by the Secrets Store Sync Controller`,
    };
  if (annotations[CONTROLLER_LABEL] !== undefined)
    return {
      reason: Reasons.invalidAnnotation,
      message: `annotation ${CONTROLLER_LABEL} is reserved for use by the Secrets Store Sync Controller`,
    };
  return undefined;
}

/** The Secret type never written: the API server would put a token of any service account into it. */
export const DENIED_SECRET_TYPE = 'kubernetes.io/service-account-token';

/**
 * A type the controller refuses, as SSC's admission policies do (checked in the controller
 * too, so it holds without them).
 */
export function secretTypeProblem(ss: SecretSync): SpecProblem | undefined {
  if ((ss.spec.secretObject.type ?? 'Opaque') !== DENIED_SECRET_TYPE) return undefined;
  return {
    reason: Reasons.patchError,
    message: `failed to patch secret "${ss.metadata?.name ?? ''}": Secrets of type ${DENIED_SECRET_TYPE} are never written`,
  };
}

/**
 * The Secret's data from the provider's files: each sourcePath's file as its targetKey,
 * `kubernetes.io/tls` split into tls.crt and tls.key by the driver's rules. Throws an
 * SscError naming the SecretSync and the path, never the contents.
 */
export function syncedSecretData(ss: SecretSync, files: ReadonlyMap<string, Buffer>): Map<string, Buffer> {
  const object = ss.spec.secretObject;
  return buildSecretData(
    {
      secretName: ss.metadata?.name ?? '',
      type: object.type ?? 'Opaque',
      labels: {},
      annotations: {},
      data: object.data.map((d) => ({ objectName: d.sourcePath.trim(), key: d.targetKey.trim() })),
    },
    files,
  );
}

/**
 * The server-side apply body of the Secret: the SecretSync's name and namespace, its
 * labels plus the controller's label, its annotations, one owner reference to it.
 */
export function secretApplyBody(ss: SecretSync, data: ReadonlyMap<string, Buffer>): Secret & { type: string } {
  const object = ss.spec.secretObject;
  const encoded: Record<string, string> = {};
  for (const [key, value] of data) encoded[key] = value.toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: ss.metadata?.name ?? '',
      namespace: ss.metadata?.namespace ?? '',
      labels: { ...object.labels, [CONTROLLER_LABEL]: '' },
      ...(object.annotations && Object.keys(object.annotations).length > 0
        ? { annotations: { ...object.annotations } }
        : {}),
      ownerReferences: [
        {
          apiVersion: SECRET_SYNC_API_VERSION,
          kind: SECRET_SYNC_KIND,
          name: ss.metadata?.name ?? '',
          uid: ss.metadata?.uid ?? '',
        },
      ],
    },
    data: encoded,
    type: object.type ?? 'Opaque',
  };
}

/**
 * Why an existing Secret must not be written, or undefined when it may: only a Secret
 * that is absent, or owned by this very SecretSync (its UID), is ever written; a
 * Secret of someone else is never adopted.
 */
export function ownershipProblem(existing: Secret | undefined, ss: SecretSync): string | undefined {
  if (existing === undefined) return undefined;
  const uid = ss.metadata?.uid;
  const owners = existing.metadata?.ownerReferences ?? [];
  if (owners.some((o) => o.uid === uid && o.kind === SECRET_SYNC_KIND)) return undefined;
  return owners.length === 0
    ? 'the Secret exists and has no owner; it is not adopted and was left untouched'
    : 'the Secret exists and is owned by another object; it was left untouched';
}

/** True when every entry of `want` is in `have` with the same value. */
function includes(have: Readonly<Record<string, string>> | undefined, want: Readonly<Record<string, string>>): boolean {
  return Object.entries(want).every(([k, v]) => have?.[k] === v);
}

/**
 * True when the Secret holds what the apply body would write: the same data and type, the
 * labels, annotations and owner reference. False when it is gone or was edited out of band
 * (drift the controller repairs).
 */
export function secretMatches(existing: Secret | undefined, body: ReturnType<typeof secretApplyBody>): boolean {
  if (existing === undefined) return false;
  const data = existing.data ?? {};
  const want = body.data ?? {};
  if (Object.keys(data).length !== Object.keys(want).length || !includes(data, want)) return false;
  if ((existing.type ?? 'Opaque') !== body.type) return false;
  const meta = existing.metadata ?? {};
  const uid = body.metadata?.ownerReferences?.[0]?.uid;
  return (
    includes(meta.labels, body.metadata?.labels ?? {}) &&
    includes(meta.annotations, body.metadata?.annotations ?? {}) &&
    (meta.ownerReferences ?? []).some((o) => o.uid === uid)
  );
}
