import { expect } from 'chai';
import {
  appsPath,
  corePath,
  csiDriverPath,
  objectNameProblem,
  podStatusPath,
  secretProviderClassPath,
} from '../../../../driver/k8s/resource-paths.js';
import { SscError } from '../../../../lib/errors.js';

// Every name put into an API path is checked before the path exists: `new URL` resolves
// "." and ".." segments, so a Secret named "." would GET (list) a namespace's Secrets.

function refusal(build: () => string): SscError {
  try {
    build();
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('invalid-argument');
    expect((err as SscError).reason).to.equal('InvalidObjectName');
    return err as SscError;
  }
  throw new Error('expected the name to be refused');
}

describe('resource paths', () => {
  it('builds paths for valid names', () => {
    expect(corePath('secrets', 'team-a', 'web.tls')).to.equal('/api/v1/namespaces/team-a/secrets/web.tls');
    expect(corePath('serviceaccounts', 'ns', 'default', 'token')).to.equal(
      '/api/v1/namespaces/ns/serviceaccounts/default/token',
    );
    expect(corePath('secrets')).to.equal('/api/v1/secrets');
    expect(podStatusPath('ns', 'web-0-ns-db')).to.equal(
      '/apis/secrets-store.csi.x-k8s.io/v1/namespaces/ns/secretproviderclasspodstatuses/web-0-ns-db',
    );
    expect(secretProviderClassPath('ns', 'db')).to.equal(
      '/apis/secrets-store.csi.x-k8s.io/v1/namespaces/ns/secretproviderclasses/db',
    );
    expect(appsPath('deployments', 'ns', 'web')).to.equal('/apis/apps/v1/namespaces/ns/deployments/web');
    expect(csiDriverPath('secrets-store.csi.k8s.io')).to.equal(
      '/apis/storage.k8s.io/v1/csidrivers/secrets-store.csi.k8s.io',
    );
  });

  // A path that `new URL` would resolve elsewhere, or that the API server cannot hold.
  const names: [string, string, RegExp][] = [
    ['.', 'Secret', /invalid Secret name "\.": must be a DNS-1123 subdomain/],
    ['..', 'Secret', /invalid Secret name "\.\."/],
    ['a/..', 'Secret', /invalid Secret name "a\/\.\."/],
    ['%2e%2e', 'Secret', /invalid Secret name/],
    ['', 'Secret', /invalid Secret name "": must not be empty/],
    ['Web', 'Secret', /invalid Secret name "Web"/],
    ['-web', 'Secret', /invalid Secret name/],
    ['web.', 'Secret', /invalid Secret name/],
    ['a'.repeat(254), 'Secret', /invalid Secret name "a{64}…": must be at most 253 characters/],
  ];
  for (const [name, kind, message] of names) {
    it(`refuses the ${kind} name ${JSON.stringify(name.slice(0, 20))}`, () => {
      expect(refusal(() => corePath('secrets', 'ns', name)).message).to.match(message);
    });
  }

  it('refuses bad names of every resource and namespace, naming which', () => {
    expect(refusal(() => corePath('secrets', '..')).message).to.match(
      /invalid namespace "\.\.": must be a DNS-1123 label/,
    );
    expect(refusal(() => corePath('pods', 'ns', '.')).message).to.match(/invalid Pod name "\."/);
    expect(refusal(() => corePath('serviceaccounts', 'ns', '..', 'token')).message).to.match(
      /invalid ServiceAccount name/,
    );
    expect(refusal(() => secretProviderClassPath('ns', '.')).message).to.match(/invalid SecretProviderClass name "\."/);
    expect(refusal(() => podStatusPath('ns', '..')).message).to.match(/invalid SecretProviderClassPodStatus name/);
    expect(refusal(() => appsPath('replicasets', 'ns', '..')).message).to.match(/invalid ReplicaSet name/);
    expect(refusal(() => csiDriverPath('..')).message).to.match(/invalid CSIDriver name/);
    expect(refusal(() => corePath('secrets', 'a'.repeat(64))).message).to.match(/at most 63 characters/);
    expect(refusal(() => corePath('secrets', 'team.a')).message).to.match(/invalid namespace "team\.a"/);
  });

  it('objectNameProblem accepts DNS-1123 subdomains only', () => {
    expect(['a', 'a-b', 'a.b-c.d', '0', 'a'.repeat(253)].map(objectNameProblem)).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(['.', '..', 'A', 'a_b', 'a..b', 'a.-b'].map((n) => objectNameProblem(n) !== undefined)).to.deep.equal([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });
});
