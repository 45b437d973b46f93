import { expect } from 'chai';
import { LineDecoder } from '../../../../../driver/k8s/client/http-transport.js';
import { resourcePath } from '../../../../../driver/k8s/client/kube-api.js';
import {
  appsPath,
  corePath,
  csiDriverPath,
  podStatusPath,
  secretProviderClassPath,
} from '../../../../../driver/k8s/resource-paths.js';

describe('Kubernetes REST paths', () => {
  const cases: [string, string][] = [
    [resourcePath({ version: 'v1', resource: 'pods' }), '/api/v1/pods'],
    [corePath('secrets', 'team-a', 'db'), '/api/v1/namespaces/team-a/secrets/db'],
    [corePath('serviceaccounts', 'ns', 'default', 'token'), '/api/v1/namespaces/ns/serviceaccounts/default/token'],
    [podStatusPath(), '/apis/secrets-store.csi.x-k8s.io/v1/secretproviderclasspodstatuses'],
    [
      podStatusPath('ns', 'app-ns-spc'),
      '/apis/secrets-store.csi.x-k8s.io/v1/namespaces/ns/secretproviderclasspodstatuses/app-ns-spc',
    ],
    [secretProviderClassPath('ns', 'db'), '/apis/secrets-store.csi.x-k8s.io/v1/namespaces/ns/secretproviderclasses/db'],
    // The raw builder escapes what it is given; resource-paths.ts refuses such names first.
    [
      resourcePath({ version: 'v1', resource: 'secrets', namespace: 'ns', name: 'a b/c' }),
      '/api/v1/namespaces/ns/secrets/a%20b%2Fc',
    ],
    [appsPath('deployments', 'ns', 'web'), '/apis/apps/v1/namespaces/ns/deployments/web'],
    [csiDriverPath('secrets-store.csi.k8s.io'), '/apis/storage.k8s.io/v1/csidrivers/secrets-store.csi.k8s.io'],
  ];
  for (const [actual, expected] of cases) it(expected, () => expect(actual).to.equal(expected));
});

describe('LineDecoder: watch events whatever the chunking', () => {
  it('returns complete lines only, keeping a partial one for the next chunk, skipping blank lines', () => {
    const lines = new LineDecoder();
    expect(lines.push('{"type":"ADDED"')).to.deep.equal([]);
    expect(lines.push(',"n":1}\n\n{"type":"MOD')).to.deep.equal(['{"type":"ADDED","n":1}']);
    expect(lines.push('IFIED"}\n{"a":2}\n{"b"')).to.deep.equal(['{"type":"MODIFIED"}', '{"a":2}']);
    expect(lines.push(':3}\n')).to.deep.equal(['{"b":3}']);
  });
});
