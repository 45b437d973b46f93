import { expect } from 'chai';
import { responseFiles, syncMountRequest } from '../../../sync-controller/provider-fetch.js';

describe('sync-controller Mount request', () => {
  it("carries the class parameters, the controller pod, the SecretSync's namespace and service account, the tokens", () => {
    const req = syncMountRequest({
      parameters: { objects: 'x', 'csi.storage.k8s.io/pod.name': 'forged' },
      namespace: 'ns',
      serviceAccount: 'sa',
      pod: { name: 'ctl-0', uid: 'u-1' },
      tokens: '{"aud":{}}',
    });
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({
      objects: 'x',
      'csi.storage.k8s.io/pod.name': 'ctl-0',
      'csi.storage.k8s.io/pod.uid': 'u-1',
      'csi.storage.k8s.io/pod.namespace': 'ns',
      'csi.storage.k8s.io/serviceAccount.name': 'sa',
      'csi.storage.k8s.io/serviceAccount.tokens': '{"aud":{}}',
    });
    expect(req).to.include({ secrets: '{}', target_path: '/mnt/secrets-store', permission: '420' });
  });

  it('a class without parameters works; no tokens key without audiences', () => {
    const req = syncMountRequest({
      parameters: {},
      namespace: 'ns',
      serviceAccount: 'sa',
      pod: { name: '', uid: '' },
      tokens: undefined,
    });
    expect(Object.keys(JSON.parse(req.attributes ?? ''))).not.to.include('csi.storage.k8s.io/serviceAccount.tokens');
  });

  it('a response with an error code is a failure naming the provider and the code', () => {
    expect(() => responseFiles('file', { files: [], object_version: [], error: { code: 'Oops' } })).to.throw(
      'provider "file" Mount failed with error code Oops',
    );
  });
});
