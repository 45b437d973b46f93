// The pod a Mount is for. kubelet puts these in the volume context when the CSIDriver
// sets podInfoOnMount: true (https://kubernetes-csi.github.io/docs/pod-info.html), and the
// driver passes them to the provider among the Mount's attributes.
import { SscError } from '../../lib/errors.js';

/** The attribute holding the pod's name. */
export const POD_NAME_ATTRIBUTE = 'csi.storage.k8s.io/pod.name';
/** The attribute holding the pod's namespace. */
export const POD_NAMESPACE_ATTRIBUTE = 'csi.storage.k8s.io/pod.namespace';
/** The attribute holding the pod's UID. */
export const POD_UID_ATTRIBUTE = 'csi.storage.k8s.io/pod.uid';
/** The attribute holding the pod's service account name. */
export const SERVICE_ACCOUNT_ATTRIBUTE = 'csi.storage.k8s.io/serviceAccount.name';

/**
 * `provider`'s error for a Mount that lacks the pod `attribute`: FAILED_PRECONDITION,
 * reason `PodInfoMissing`, saying how to fix it; `why` (in parentheses) says what it is needed for.
 */
export function podInfoMissing(provider: string, attribute: string, why?: string): SscError {
  return new SscError(
    'failed-precondition',
    `${provider} provider: the Mount has no ${attribute}: the CSIDriver must set podInfoOnMount: true${why === undefined ? '' : ` (${why})`}`,
    { reason: 'PodInfoMissing' },
  );
}
