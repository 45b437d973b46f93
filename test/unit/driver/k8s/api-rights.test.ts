import { expect } from 'chai';
import {
  covers,
  describeRight,
  featuresOf,
  FEATURE_CALLS,
  GRANTED_TO_EVERY_USER,
  rightOfRequest,
  rolesGranting,
  SHIPPED_ROLES,
  type ApiRight,
} from '../../../../driver/k8s/api-rights.js';
import { resourcePath } from '../../../../driver/k8s/client/kube-api.js';
import {
  appsPath,
  corePath,
  csiDriverPath,
  podStatusPath,
  secretProviderClassPath,
} from '../../../../driver/k8s/resource-paths.js';

describe('api-rights: the RBAC right of each API request', () => {
  const cases: [string, string, string, boolean, ApiRight | undefined][] = [
    [
      'get of a namespaced object',
      'GET',
      corePath('pods', 'ns', 'app'),
      false,
      { verb: 'get', group: '', resource: 'pods', name: 'app' },
    ],
    [
      'list across namespaces',
      'GET',
      podStatusPath(),
      false,
      { verb: 'list', group: 'secrets-store.csi.x-k8s.io', resource: 'secretproviderclasspodstatuses' },
    ],
    [
      'list with a query',
      'GET',
      `${corePath('pods')}?fieldSelector=spec.nodeName%3Dn`,
      false,
      { verb: 'list', group: '', resource: 'pods' },
    ],
    ['watch of a collection', 'GET', corePath('secrets'), true, { verb: 'watch', group: '', resource: 'secrets' }],
    [
      'a watch error event',
      'WATCH',
      secretProviderClassPath(),
      false,
      { verb: 'watch', group: 'secrets-store.csi.x-k8s.io', resource: 'secretproviderclasses' },
    ],
    [
      'create in a namespace',
      'POST',
      corePath('events', 'ns'),
      false,
      { verb: 'create', group: '', resource: 'events' },
    ],
    [
      'create of a subresource',
      'POST',
      corePath('serviceaccounts', 'ns', 'default', 'token'),
      false,
      { verb: 'create', group: '', resource: 'serviceaccounts/token', name: 'default' },
    ],
    [
      'replace',
      'PUT',
      corePath('secrets', 'ns', 'db'),
      false,
      { verb: 'update', group: '', resource: 'secrets', name: 'db' },
    ],
    [
      'patch in a group',
      'PATCH',
      appsPath('deployments', 'ns', 'web'),
      false,
      { verb: 'patch', group: 'apps', resource: 'deployments', name: 'web' },
    ],
    [
      'delete',
      'DELETE',
      podStatusPath('ns', 'p'),
      false,
      { verb: 'delete', group: 'secrets-store.csi.x-k8s.io', resource: 'secretproviderclasspodstatuses', name: 'p' },
    ],
    [
      'delete of a collection',
      'DELETE',
      corePath('secrets', 'ns'),
      false,
      { verb: 'deletecollection', group: '', resource: 'secrets' },
    ],
    [
      'a cluster-scoped object',
      'GET',
      csiDriverPath('secrets-store.csi.k8s.io'),
      false,
      { verb: 'get', group: 'storage.k8s.io', resource: 'csidrivers', name: 'secrets-store.csi.k8s.io' },
    ],
    [
      'a namespace itself',
      'GET',
      '/api/v1/namespaces/ns',
      false,
      { verb: 'get', group: '', resource: 'namespaces', name: 'ns' },
    ],
    // resource-paths.ts refuses such a name; the raw builder still escapes one.
    [
      'an escaped name',
      'GET',
      resourcePath({ version: 'v1', resource: 'secrets', namespace: 'ns', name: 'a b' }),
      false,
      { verb: 'get', group: '', resource: 'secrets', name: 'a b' },
    ],
    ['not a resource path', 'GET', '/healthz', false, undefined],
    ['a discovery path', 'GET', '/apis/apps', false, undefined],
    ['an unknown method', 'OPTIONS', corePath('pods'), false, undefined],
  ];
  for (const [what, method, path, watch, right] of cases) {
    it(what, () => expect(rightOfRequest(method, path, watch)).to.deep.equal(right));
  }

  it('describes rights as the API server words them', () => {
    expect(describeRight({ verb: 'create', group: '', resource: 'serviceaccounts/token' })).to.equal(
      'create serviceaccounts/token',
    );
    expect(describeRight({ verb: 'patch', group: 'apps', resource: 'deployments' })).to.equal(
      'patch deployments in API group "apps"',
    );
    expect(describeRight({ verb: 'get', group: 'storage.k8s.io', resource: 'csidrivers', name: 'x' })).to.equal(
      'get csidrivers "x" in API group "storage.k8s.io"',
    );
  });

  it('names the role of the feature that made the call first, else every role that grants the right', () => {
    const secretGet = { verb: 'get', group: '', resource: 'secrets' };
    expect(rolesGranting(secretGet).map((r) => r.file)).to.deep.equal([
      'deploy/rbac-secret-sync.yaml',
      'deploy/rbac-rotation.yaml',
    ]);
    expect(rolesGranting(secretGet, 'rotation-reconciler').map((r) => r.file)).to.deep.equal([
      'deploy/rbac-rotation.yaml',
    ]);
    // Secret sync and the reconciler both watch the used=true Secrets of their namespaces.
    expect(
      rolesGranting({ verb: 'watch', group: '', resource: 'secrets' }, 'secret-sync').map((r) => r.file),
    ).to.deep.equal(['deploy/rbac-secret-sync.yaml']);
    expect(rolesGranting({ verb: 'watch', group: '', resource: 'secrets' }).map((r) => r.file)).to.deep.equal([
      'deploy/rbac-secret-sync.yaml',
      'deploy/rbac-rotation.yaml',
    ]);
    expect(
      rolesGranting({ verb: 'get', group: 'storage.k8s.io', resource: 'csidrivers', name: 'other-driver' }),
    ).to.deep.equal([]);
    expect(rolesGranting({ verb: 'delete', group: '', resource: 'secrets' })).to.deep.equal([]);
  });

  it('runs the reconciler only in reconciler mode, and sync only when enabled', () => {
    expect(
      featuresOf({ enableSecretSync: true, enableSecretRotation: true, rotationMode: 'reconciler' }),
    ).to.deep.equal(['publish', 'secret-sync', 'rotation-reconciler']);
    expect(featuresOf({ enableSecretSync: true, enableSecretRotation: true, rotationMode: 'republish' })).to.deep.equal(
      ['publish', 'secret-sync', 'rotation-republish'],
    );
    expect(
      featuresOf({ enableSecretSync: false, enableSecretRotation: false, rotationMode: 'reconciler' }),
    ).to.deep.equal(['publish']);
    // auto runs the reconciler where its rights are granted (deploy/'s roles).
    expect(featuresOf({ enableSecretSync: false, enableSecretRotation: true, rotationMode: 'auto' })).to.deep.equal([
      'publish',
      'rotation-reconciler',
    ]);
  });

  it('every call of every feature is granted by the role of that feature or the base role, or to every user', () => {
    for (const [feature, calls] of Object.entries(FEATURE_CALLS)) {
      for (const call of calls) {
        if (GRANTED_TO_EVERY_USER.some((g) => covers(g, call))) continue;
        const granting = SHIPPED_ROLES.filter(
          (r) =>
            (r.feature === feature || r.feature === 'publish') &&
            r.rights.some(
              (g) =>
                g.verb === call.verb && g.group === call.group && g.resource === call.resource && g.name === call.name,
            ),
        );
        expect(granting, `${feature}: ${describeRight(call)}`).to.not.deep.equal([]);
      }
    }
  });
});
