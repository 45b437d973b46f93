import { expect } from 'chai';
import type { PublishRequest } from '../../../../driver/publish/publish-request.js';
import {
  parseVolumeRecord,
  recordOwner,
  requestOfRecord,
  serializeVolumeRecord,
  VOLUME_RECORD_FILE,
  volumeRecordOf,
} from '../../../../driver/rotation/volume-record.js';

const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';
const pod = { name: 'web', namespace: 'team', uid: 'u-1', serviceAccountName: 'app' };
const context = {
  secretProviderClass: 'cls',
  'csi.storage.k8s.io/pod.name': 'web',
  'csi.storage.k8s.io/pod.namespace': 'team',
  extra: 'attr',
};
const request = (over: Partial<PublishRequest> = {}): PublishRequest => ({
  volumeId: 'vol-1',
  targetPath: '/var/lib/kubelet/pods/u-1/volumes/kubernetes.io~csi/s/mount',
  spcName: 'cls',
  pod,
  volumeContext: context,
  secrets: {},
  ...over,
});
const owner = recordOwner('secrets-store.csi.k8s.io', '/csi/csi.sock');

describe('volume record: what a restarted local-mode driver needs, never a secret', () => {
  it('is a name providers cannot write and the atomic writer does not treat as a payload directory', () => {
    expect(VOLUME_RECORD_FILE.startsWith('..')).to.equal(true);
    expect(/^\.\.\d/.test(VOLUME_RECORD_FILE)).to.equal(false);
  });

  const withheldCases: [string, Partial<PublishRequest>, boolean][] = [
    ['no secrets, no tokens', {}, false],
    ['nodePublishSecretRef data in secrets', { secrets: { password: 'p4ss' } }, true],
    ['tokens in secrets (newer kubelets)', { secrets: { [TOKENS_KEY]: '{"a":{"token":"t0k"}}' } }, true],
    ['tokens in volume_context', { volumeContext: { ...context, [TOKENS_KEY]: '{"a":{"token":"t0k"}}' } }, true],
  ];
  for (const [name, over, withheld] of withheldCases) {
    it(`records ${name} as withheld=${withheld}, with no secret value or token key`, () => {
      const record = volumeRecordOf(request(over), 'vault', owner);
      const text = serializeVolumeRecord(record);
      expect(record.withheld).to.equal(withheld);
      expect(record.volumeContext).to.deep.equal(context);
      for (const secret of ['p4ss', 't0k', 'password', TOKENS_KEY]) expect(text).not.to.contain(secret);
    });
  }

  it('round-trips through its text, which does not depend on key order', () => {
    const record = volumeRecordOf(request(), 'vault', owner);
    const reordered = volumeRecordOf(
      request({ volumeContext: Object.fromEntries(Object.entries(context).reverse()) }),
      'vault',
      owner,
    );
    expect(serializeVolumeRecord(reordered)).to.equal(serializeVolumeRecord(record));
    expect(parseVolumeRecord(serializeVolumeRecord(record))).to.deep.equal(record);
  });

  it('rebuilds the publish request without secrets', () => {
    const rebuilt = requestOfRecord(volumeRecordOf(request({ secrets: { password: 'p4ss' } }), 'vault', owner));
    expect(rebuilt).to.deep.equal(request());
  });

  it("keeps the mount group (the pod's fsGroup), so rotation after a restart writes for the same group", () => {
    const record = volumeRecordOf(request({ mountGroup: 2000 }), 'vault', owner);
    expect(record.mountGroup).to.equal(2000);
    expect(parseVolumeRecord(serializeVolumeRecord(record))).to.deep.equal(record);
    expect(requestOfRecord(record)).to.deep.equal(request({ mountGroup: 2000 }));
  });

  it('writes no mountGroup key without a mount group, so records read as before', () => {
    const text = serializeVolumeRecord(volumeRecordOf(request(), 'vault', owner));
    expect(text).not.to.contain('mountGroup');
    expect(requestOfRecord(parseVolumeRecord(text))).not.to.have.property('mountGroup');
  });

  const good = JSON.parse(serializeVolumeRecord(volumeRecordOf(request(), 'vault', owner))) as Record<string, unknown>;
  const badCases: [string, unknown, string][] = [
    ['text that is not JSON', '{', 'not JSON'],
    ['an array', [], 'not a JSON object'],
    ['another version', { ...good, version: 2 }, 'version is not 1'],
    ['a missing owner', { ...good, owner: undefined }, 'owner is not a string'],
    ['a pod without uid', { ...good, pod: { ...pod, uid: 7 } }, 'uid is not a string'],
    ['a non-string attribute', { ...good, volumeContext: { a: 1 } }, 'a is not a string'],
    [
      'a token in the volume context',
      { ...good, volumeContext: { [TOKENS_KEY]: 'x' } },
      `volumeContext holds ${TOKENS_KEY}`,
    ],
    ['a withheld that is not a boolean', { ...good, withheld: 'no' }, 'withheld is not a boolean'],
    ['a relative target path', { ...good, targetPath: 'rel' }, 'empty or relative'],
    ['an empty class name', { ...good, spcName: '' }, 'empty or relative'],
    ['a mount group that is a string', { ...good, mountGroup: '2000' }, 'mountGroup is not a group id'],
    ['a negative mount group', { ...good, mountGroup: -1 }, 'mountGroup is not a group id'],
    ['a mount group past int32', { ...good, mountGroup: 2 ** 31 }, 'mountGroup is not a group id'],
    ['a fractional mount group', { ...good, mountGroup: 1.5 }, 'mountGroup is not a group id'],
  ];
  for (const [name, doc, message] of badCases) {
    it(`refuses ${name}`, () => {
      expect(() => parseVolumeRecord(typeof doc === 'string' ? doc : JSON.stringify(doc))).to.throw(message);
    });
  }
});
