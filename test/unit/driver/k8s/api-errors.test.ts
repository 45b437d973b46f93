import { expect } from 'chai';
import { fromKubeError } from '../../../../driver/k8s/api-errors.js';
import { KubeCredentialError } from '../../../../driver/k8s/client/credentials.js';
import { KubeApiError } from '../../../../driver/k8s/client/kube-api.js';
import { SscError } from '../../../../lib/errors.js';

const status = (code: number, message: string) =>
  new KubeApiError(code, JSON.stringify({ kind: 'Status', code, message }), 'GET', '/x');
const errno = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

describe('fromKubeError: Kubernetes client failures as SscErrors', () => {
  const cases: [string, unknown, string, string, string][] = [
    [
      'a 404 with its Status message',
      status(404, 'secrets "db" not found'),
      'not-found',
      'KubernetesAPIError',
      'Kubernetes API refused to get Secret ns/db: HTTP 404 secrets "db" not found',
    ],
    [
      'a 403 with the RBAC hint',
      status(403, 'forbidden'),
      'permission-denied',
      'KubernetesAPIError',
      "Kubernetes API refused to get Secret ns/db: HTTP 403 forbidden (check the driver's RBAC)",
    ],
    [
      'a 409',
      status(409, 'conflict'),
      'aborted',
      'KubernetesAPIError',
      'Kubernetes API refused to get Secret ns/db: HTTP 409 conflict',
    ],
    [
      'a 422',
      status(422, 'invalid'),
      'invalid-argument',
      'KubernetesAPIError',
      'Kubernetes API refused to get Secret ns/db: HTTP 422 invalid',
    ],
    [
      'a 503 without a JSON body',
      new KubeApiError(503, '<html>upstream sekret</html>', 'GET', '/x'),
      'unavailable',
      'KubernetesAPIError',
      'Kubernetes API refused to get Secret ns/db: HTTP 503',
    ],
    [
      'a 418',
      status(418, 'teapot'),
      'failed-precondition',
      'KubernetesAPIError',
      'Kubernetes API refused to get Secret ns/db: HTTP 418 teapot',
    ],
    [
      'a refused connection',
      errno('ECONNREFUSED'),
      'unavailable',
      'KubernetesAPIUnavailable',
      'Kubernetes API unreachable while trying to get Secret ns/db (ECONNREFUSED)',
    ],
    [
      'a timeout inside a cause',
      Object.assign(new Error('wrapped'), { cause: errno('ETIMEDOUT') }),
      'unavailable',
      'KubernetesAPIUnavailable',
      'Kubernetes API unreachable while trying to get Secret ns/db (ETIMEDOUT)',
    ],
    [
      'a TLS verdict',
      errno('UNABLE_TO_VERIFY_LEAF_SIGNATURE'),
      'unavailable',
      'KubernetesAPIError',
      'Kubernetes API call failed while trying to get Secret ns/db (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
    ],
    [
      'missing credentials',
      new KubeCredentialError('cannot read the token file /t (ENOENT)'),
      'unavailable',
      'KubernetesAPIError',
      'Kubernetes API call failed while trying to get Secret ns/db: cannot read the token file /t (ENOENT)',
    ],
    [
      'anything else',
      new Error('sekret in a message'),
      'unavailable',
      'KubernetesAPIError',
      'Kubernetes API call failed while trying to get Secret ns/db',
    ],
  ];
  for (const [what, err, kind, reason, message] of cases) {
    it(what, () => {
      const e = fromKubeError(err, 'get Secret ns/db');
      expect([e.kind, e.reason, e.message]).to.deep.equal([kind, reason, message]);
    });
  }

  describe('a 403 from RBAC names the missing right and the deploy/ file that grants it', () => {
    const denied = (method: string, path: string, watch = false) =>
      new KubeApiError(
        403,
        JSON.stringify({
          kind: 'Status',
          code: 403,
          message: `x is forbidden: User "system:serviceaccount:kube-system:secrets-store-csi-driver" cannot ${method === 'POST' ? 'create' : 'get'} resource "x" in API group "" in the namespace "ns"`,
        }),
        method,
        path,
        watch,
      );
    const cases: [string, KubeApiError, Parameters<typeof fromKubeError>[2], string][] = [
      [
        'a token request (rotation reconciler)',
        denied('POST', '/api/v1/namespaces/ns/serviceaccounts/default/token'),
        undefined,
        "(the driver's RBAC lacks: create serviceaccounts/token; granted by ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml)",
      ],
      [
        'a Secret read by Secret sync',
        denied('GET', '/api/v1/namespaces/ns/secrets/db'),
        'secret-sync',
        "(the driver's RBAC lacks: get secrets; granted by ClusterRole secretprovidersyncing-role in deploy/rbac-secret-sync.yaml)",
      ],
      [
        'a Secret read without saying by whom',
        denied('GET', '/api/v1/namespaces/ns/secrets/db'),
        undefined,
        "(the driver's RBAC lacks: get secrets; granted by ClusterRole secretprovidersyncing-role in deploy/rbac-secret-sync.yaml or ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml)",
      ],
      [
        'a Secret write',
        denied('PUT', '/api/v1/namespaces/ns/secrets/db'),
        'secret-sync',
        "(the driver's RBAC lacks: update secrets; granted by ClusterRole secretprovidersyncing-role in deploy/rbac-secret-sync.yaml)",
      ],
      [
        'a watch of Secrets',
        denied('GET', '/api/v1/secrets', true),
        'rotation-reconciler',
        "(the driver's RBAC lacks: watch secrets; granted by ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml)",
      ],
      [
        'a workload restart',
        denied('PATCH', '/apis/apps/v1/namespaces/ns/statefulsets/db'),
        'workload-restart',
        '(the driver\'s RBAC lacks: patch statefulsets in API group "apps"; granted by ClusterRole secretproviderrestart-role in deploy/rbac-workload-restart.yaml)',
      ],
      [
        'a pod status write',
        denied('POST', '/apis/secrets-store.csi.x-k8s.io/v1/namespaces/ns/secretproviderclasspodstatuses'),
        undefined,
        '(the driver\'s RBAC lacks: create secretproviderclasspodstatuses in API group "secrets-store.csi.x-k8s.io"; granted by ClusterRole secretproviderclasses-role in deploy/rbac.yaml)',
      ],
      [
        'an event',
        denied('POST', '/api/v1/namespaces/ns/events'),
        undefined,
        "(the driver's RBAC lacks: create events; granted by ClusterRole secretproviderclasses-role in deploy/rbac.yaml)",
      ],
      [
        'the CSIDriver (granted by name)',
        denied('GET', '/apis/storage.k8s.io/v1/csidrivers/secrets-store.csi.k8s.io'),
        undefined,
        '(the driver\'s RBAC lacks: get csidrivers "secrets-store.csi.k8s.io" in API group "storage.k8s.io"; granted by ClusterRole secretproviderclasses-role in deploy/rbac.yaml)',
      ],
      [
        'a right no shipped role grants',
        denied('DELETE', '/api/v1/namespaces/ns/secrets/db'),
        'secret-sync',
        "(the driver's RBAC lacks: delete secrets; no role in deploy/ grants it)",
      ],
    ];
    for (const [what, err, feature, hint] of cases) {
      it(what, () => {
        const e = fromKubeError(err, 'do it', feature);
        expect([e.kind, e.reason]).to.deep.equal(['permission-denied', 'KubernetesAPIError']);
        expect(e.message.startsWith('Kubernetes API refused to do it: HTTP 403 x is forbidden: User ')).to.equal(true);
        expect(e.message.endsWith(` ${hint}`), e.message).to.equal(true);
      });
    }

    it('keeps the generic hint for a 403 that is not an RBAC denial', () => {
      const terminating = new KubeApiError(
        403,
        JSON.stringify({ message: 'unable to create new content in namespace ns because it is being terminated' }),
        'POST',
        '/api/v1/namespaces/ns/events',
      );
      expect(fromKubeError(terminating, 'create Event').message).to.equal(
        "Kubernetes API refused to create Event: HTTP 403 unable to create new content in namespace ns because it is being terminated (check the driver's RBAC)",
      );
    });
  });

  it('passes an SscError through unchanged', () => {
    const e = new SscError('not-found', 'SecretProviderClass ns/x not found');
    expect(fromKubeError(e, 'get x')).to.equal(e);
  });
});
