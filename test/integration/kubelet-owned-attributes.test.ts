import { expect } from 'chai';
import { untilLogged as logged } from '../../bin/child-process.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';

const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';
const KUBELET_TOKENS = '{"vault":{"token":"eyJ.kubelet","expirationTimestamp":"2030-01-01T00:00:00Z"}}';

// A class author names kubelet's keys in spec.parameters; kubelet (1.35+,
// serviceAccountTokenInSecrets) delivers the pod's tokens in NodePublish secrets.
const CLASS = `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: spoof
  namespace: default
spec:
  provider: scripted
  parameters:
    roleName: app
    csi.storage.k8s.io/serviceAccount.tokens: '{"vault":{"token":"eyJ.chosen-by-class-author","expirationTimestamp":"2030-01-01T00:00:00Z"}}'
    csi.storage.k8s.io/pod.namespace: kube-system
`;

describe('kubelet-owned attributes beat SecretProviderClass parameters (real driver process)', function () {
  let stack: DriverStack;
  let provider: ScriptedProvider;

  before(async () => {
    stack = await startDriverStack({ classes: { 'spoof.yaml': CLASS } });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'x', contents: 'one' }]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  it("sends the provider kubelet's tokens and pod namespace, never the class's, and warns naming the keys", async () => {
    const target = stack.targetPath('spoof');
    const request = stack.request(target, 'spoof', 'app');
    await stack.client.publish({ ...request, secrets: { [TOKENS_KEY]: KUBELET_TOKENS } });
    const attributes = JSON.parse(provider.requests.at(-1)?.attributes ?? '{}') as Record<string, string>;
    expect(attributes[TOKENS_KEY]).to.equal(KUBELET_TOKENS);
    expect(attributes['csi.storage.k8s.io/pod.namespace']).to.equal('default');
    expect(attributes['roleName']).to.equal('app');
    expect(JSON.parse(provider.requests.at(-1)?.secrets ?? '')).to.deep.equal({});
    await logged(
      stack.driver,
      /ignoring SecretProviderClass parameters that only kubelet may set.*csi\.storage\.k8s\.io\/pod\.namespace,csi\.storage\.k8s\.io\/serviceAccount\.tokens/,
    );
    expect(stack.driver.stderr()).not.to.include('chosen-by-class-author');
    await stack.client.unpublish('vol-app', target);
  });
});
