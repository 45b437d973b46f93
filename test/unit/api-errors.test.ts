import { expect } from 'chai';
import { fromKubeError } from '../../driver/k8s/api-errors.js';
import { KubeCredentialError } from '../../driver/k8s/client/credentials.js';
import { KubeApiError } from '../../driver/k8s/client/kube-api.js';
import { SscError } from '../../proto/runtime/errors.js';

const status = (code: number, message: string) => new KubeApiError(code, JSON.stringify({ kind: 'Status', code, message }), 'GET', '/x');
const errno = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

describe('fromKubeError: Kubernetes client failures as SscErrors', () => {
  const cases: [string, unknown, string, string, string][] = [
    ['a 404 with its Status message', status(404, 'secrets "db" not found'), 'not-found', 'KubernetesAPIError', 'Kubernetes API refused to get Secret ns/db: HTTP 404 secrets "db" not found'],
    ['a 403 with the RBAC hint', status(403, 'forbidden'), 'permission-denied', 'KubernetesAPIError', 'Kubernetes API refused to get Secret ns/db: HTTP 403 forbidden (check the driver\'s RBAC)'],
    ['a 409', status(409, 'conflict'), 'aborted', 'KubernetesAPIError', 'Kubernetes API refused to get Secret ns/db: HTTP 409 conflict'],
    ['a 422', status(422, 'invalid'), 'invalid-argument', 'KubernetesAPIError', 'Kubernetes API refused to get Secret ns/db: HTTP 422 invalid'],
    ['a 503 without a JSON body', new KubeApiError(503, '<html>upstream sekret</html>', 'GET', '/x'), 'unavailable', 'KubernetesAPIError', 'Kubernetes API refused to get Secret ns/db: HTTP 503'],
    ['a 418', status(418, 'teapot'), 'failed-precondition', 'KubernetesAPIError', 'Kubernetes API refused to get Secret ns/db: HTTP 418 teapot'],
    ['a refused connection', errno('ECONNREFUSED'), 'unavailable', 'KubernetesAPIUnavailable', 'Kubernetes API unreachable while trying to get Secret ns/db (ECONNREFUSED)'],
    ['a timeout inside a cause', Object.assign(new Error('wrapped'), { cause: errno('ETIMEDOUT') }), 'unavailable', 'KubernetesAPIUnavailable', 'Kubernetes API unreachable while trying to get Secret ns/db (ETIMEDOUT)'],
    ['a TLS verdict', errno('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'unavailable', 'KubernetesAPIError', 'Kubernetes API call failed while trying to get Secret ns/db (UNABLE_TO_VERIFY_LEAF_SIGNATURE)'],
    ['missing credentials', new KubeCredentialError('cannot read the token file /t (ENOENT)'), 'unavailable', 'KubernetesAPIError', 'Kubernetes API call failed while trying to get Secret ns/db: cannot read the token file /t (ENOENT)'],
    ['anything else', new Error('sekret in a message'), 'unavailable', 'KubernetesAPIError', 'Kubernetes API call failed while trying to get Secret ns/db'],
  ];
  for (const [what, err, kind, reason, message] of cases) {
    it(what, () => {
      const e = fromKubeError(err, 'get Secret ns/db');
      expect([e.kind, e.reason, e.message]).to.deep.equal([kind, reason, message]);
    });
  }

  it('passes an SscError through unchanged', () => {
    const e = new SscError('not-found', 'SecretProviderClass ns/x not found');
    expect(fromKubeError(e, 'get x')).to.equal(e);
  });
});
