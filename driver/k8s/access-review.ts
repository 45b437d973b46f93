import type { ApiRight } from './api-rights.js';
import type { KubeApi } from './client/kube-api.js';

/** authorization.k8s.io/v1 SelfSubjectAccessReview, as sent and as answered. */
interface SelfSubjectAccessReview {
  apiVersion: 'authorization.k8s.io/v1';
  kind: 'SelfSubjectAccessReview';
  spec: {
    resourceAttributes: { verb: string; group: string; resource: string; subresource?: string; name?: string };
  };
  status?: { allowed?: boolean };
}

const REVIEWS_PATH = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

/**
 * Asks the API server whether the driver's own identity has `right` (what `kubectl auth
 * can-i` asks). Every authenticated user may ask (system:basic-user); rejects when the
 * API server can't be asked.
 */
export async function mayI(api: Pick<KubeApi, 'create'>, right: ApiRight): Promise<boolean> {
  const [resource = '', subresource] = right.resource.split('/');
  const review: SelfSubjectAccessReview = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        verb: right.verb,
        group: right.group,
        resource,
        ...(subresource !== undefined ? { subresource } : {}),
        ...(right.name !== undefined ? { name: right.name } : {}),
      },
    },
  };
  const answer = await api.create<SelfSubjectAccessReview>(REVIEWS_PATH, review);
  return answer.status?.allowed === true;
}
