import type { NodePublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { NodeUnpublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodeUnpublishVolumeRequest.js';
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { MAX_MOUNT_GROUP } from '../volume/ownership.js';
import { canonicalTargetPath } from '../mount/target-path.js';

import {
  POD_NAME_KEY,
  POD_NAMESPACE_KEY,
  POD_UID_KEY,
  SECRET_PROVIDER_CLASS_KEY,
  SERVICE_ACCOUNT_NAME_KEY,
  type PublishRequest,
  type UnpublishRequest,
} from '../publish/publish-request.js';

function invalid(message: string): SscError {
  return new SscError('invalid-argument', message, { reason: 'InvalidRequest' });
}

/** Where kubelet puts the pod's fsGroup in NodePublishVolume (CSI spec field name). */
export const VOLUME_MOUNT_GROUP_FIELD = 'volume_capability.mount.volume_mount_group';

/**
 * The mount group of a request: undefined when empty (no fsGroup, or a kubelet that does
 * not delegate it), else a decimal gid in Kubernetes's fsGroup range 0..2147483647, as
 * kubelet formats it (strconv.FormatInt). Anything else is INVALID_ARGUMENT naming the field.
 */
export function parseVolumeMountGroup(raw: string): number | undefined {
  if (raw === '') return undefined;
  const gid = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(gid <= MAX_MOUNT_GROUP)) {
    throw invalid(
      `${VOLUME_MOUNT_GROUP_FIELD} ${quoted(raw, 32)} is not a group id: send the pod's fsGroup as a decimal number from 0 to ${MAX_MOUNT_GROUP}`,
    );
  }
  return gid;
}

/**
 * Validates NodePublishVolume in upstream's order and with upstream's messages (tools
 * match on them), then the attributes this driver needs.
 */
export function parsePublishRequest(req: NodePublishVolumeRequest__Output): PublishRequest {
  if (!req.volume_capability) throw invalid('Volume capability missing in request');
  if (req.volume_id === '') throw invalid('Volume ID missing in request');
  if (req.target_path === '') throw invalid('Target path missing in request');
  const ctx = req.volume_context ?? {};
  if (Object.keys(ctx).length === 0) throw invalid('Volume attributes missing in request');
  if (!req.readonly) throw invalid('Readonly is not true in request');
  const targetPath = canonicalTargetPath(req.target_path);
  const mountGroup = parseVolumeMountGroup(req.volume_capability.mount?.volume_mount_group ?? '');
  const spcName = ctx[SECRET_PROVIDER_CLASS_KEY] ?? '';
  if (spcName === '')
    throw invalid(
      `volume attribute ${SECRET_PROVIDER_CLASS_KEY} is not set: name the SecretProviderClass in the pod's volume`,
    );
  const namespace = ctx[POD_NAMESPACE_KEY] ?? '';
  const name = ctx[POD_NAME_KEY] ?? '';
  if (namespace === '' || name === '') {
    throw invalid(
      `volume attributes ${POD_NAME_KEY} and ${POD_NAMESPACE_KEY} are required: set podInfoOnMount: true on the CSIDriver`,
    );
  }
  return {
    volumeId: req.volume_id,
    targetPath,
    spcName,
    pod: { name, namespace, uid: ctx[POD_UID_KEY] ?? '', serviceAccountName: ctx[SERVICE_ACCOUNT_NAME_KEY] ?? '' },
    volumeContext: ctx,
    secrets: req.secrets ?? {},
    ...(mountGroup === undefined ? {} : { mountGroup }),
  };
}

/** Validates NodeUnpublishVolume with upstream's messages. */
export function parseUnpublishRequest(req: NodeUnpublishVolumeRequest__Output): UnpublishRequest {
  if (req.volume_id === '') throw invalid('Volume ID missing in request');
  if (req.target_path === '') throw invalid('Target path missing in request');
  return { volumeId: req.volume_id, targetPath: canonicalTargetPath(req.target_path) };
}
