import { expect } from 'chai';
import { parsePublishRequest, parseUnpublishRequest, parseVolumeMountGroup } from '../../../../driver/csi/requests.js';
import type { NodePublishVolumeRequest__Output } from '../../../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { SscError } from '../../../../lib/errors.js';

const CTX = {
  secretProviderClass: 'my-spc',
  'csi.storage.k8s.io/pod.name': 'app-0',
  'csi.storage.k8s.io/pod.namespace': 'team',
  'csi.storage.k8s.io/pod.uid': 'uid-1',
  'csi.storage.k8s.io/serviceAccount.name': 'sa',
  'csi.storage.k8s.io/ephemeral': 'true',
};
const CAPABILITY = {
  mount: { fs_type: '', mount_flags: [], volume_mount_group: '' },
  access_mode: { mode: 'SINGLE_NODE_READER_ONLY' },
  access_type: 'mount',
};

function request(
  overrides: Partial<Record<keyof NodePublishVolumeRequest__Output, unknown>> = {},
): NodePublishVolumeRequest__Output {
  return {
    volume_id: 'csi-abc',
    publish_context: {},
    staging_target_path: '',
    target_path: '/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/v/mount',
    volume_capability: CAPABILITY,
    readonly: true,
    secrets: { password: 'pw' },
    volume_context: { ...CTX },
    ...overrides,
  } as NodePublishVolumeRequest__Output;
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('invalid-argument');
    return (err as SscError).message;
  }
  throw new Error('expected invalid-argument');
}

describe('parsePublishRequest', () => {
  it('returns the validated request', () => {
    expect(parsePublishRequest(request())).to.deep.equal({
      volumeId: 'csi-abc',
      targetPath: '/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/v/mount',
      spcName: 'my-spc',
      pod: { name: 'app-0', namespace: 'team', uid: 'uid-1', serviceAccountName: 'sa' },
      volumeContext: CTX,
      secrets: { password: 'pw' },
    });
  });

  it('defaults uid and service account to ""', () => {
    const { pod } = parsePublishRequest(
      request({
        volume_context: {
          secretProviderClass: 's',
          'csi.storage.k8s.io/pod.name': 'p',
          'csi.storage.k8s.io/pod.namespace': 'n',
        },
      }),
    );
    expect(pod).to.deep.equal({ name: 'p', namespace: 'n', uid: '', serviceAccountName: '' });
  });

  const CAP = 'Volume capability missing in request';
  const ID = 'Volume ID missing in request';
  const PATH = 'Target path missing in request';
  const ATTR = 'Volume attributes missing in request';
  const RO = 'Readonly is not true in request';
  const invalid: [string, Parameters<typeof request>[0], string][] = [
    ['missing capability', { volume_capability: null }, CAP],
    ['missing capability and volume id', { volume_capability: null, volume_id: '' }, CAP],
    [
      'missing everything',
      { volume_capability: null, volume_id: '', target_path: '', volume_context: {}, readonly: false },
      CAP,
    ],
    ['missing volume id', { volume_id: '' }, ID],
    [
      'missing volume id, target path, attributes, readonly',
      { volume_id: '', target_path: '', volume_context: {}, readonly: false },
      ID,
    ],
    ['missing target path', { target_path: '' }, PATH],
    ['missing target path, attributes, readonly', { target_path: '', volume_context: {}, readonly: false }, PATH],
    ['empty attributes', { volume_context: {} }, ATTR],
    ['empty attributes and not readonly', { volume_context: {}, readonly: false }, ATTR],
    ['not readonly', { readonly: false }, RO],
    ['not readonly and relative path', { readonly: false, target_path: 'rel' }, RO],
    [
      'relative target path',
      { target_path: 'var/lib/x' },
      'Target path "var/lib/x" must be an absolute path without ".." elements',
    ],
    [
      'target path with ..',
      { target_path: '/var/../etc' },
      'Target path "/var/../etc" must be an absolute path without ".." elements',
    ],
    [
      'missing secretProviderClass',
      { volume_context: { ...CTX, secretProviderClass: '' } },
      "volume attribute secretProviderClass is not set: name the SecretProviderClass in the pod's volume",
    ],
    [
      'missing pod name',
      { volume_context: { ...CTX, 'csi.storage.k8s.io/pod.name': '' } },
      'volume attributes csi.storage.k8s.io/pod.name and csi.storage.k8s.io/pod.namespace are required: set podInfoOnMount: true on the CSIDriver',
    ],
    [
      'missing pod namespace',
      { volume_context: { secretProviderClass: 's', 'csi.storage.k8s.io/pod.name': 'p' } },
      'volume attributes csi.storage.k8s.io/pod.name and csi.storage.k8s.io/pod.namespace are required: set podInfoOnMount: true on the CSIDriver',
    ],
  ];
  for (const [name, overrides, message] of invalid) {
    it(`${name} → "${message}"`, () =>
      expect(messageOf(() => parsePublishRequest(request(overrides)))).to.equal(message));
  }

  // One directory, one key: locks, rotation and the writer's memory all use this spelling.
  const KUBELET_PATH = '/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/v/mount';
  const spellings = [
    KUBELET_PATH,
    `${KUBELET_PATH}/`,
    KUBELET_PATH.replace('/pods/', '//pods/'),
    KUBELET_PATH.replace('/pods/', '/./pods/'),
    `/.//${KUBELET_PATH.slice(1)}/./`,
  ];
  for (const spelling of spellings) {
    it(`canonicalises target path ${JSON.stringify(spelling)} to kubelet's spelling`, () => {
      expect(parsePublishRequest(request({ target_path: spelling })).targetPath).to.equal(KUBELET_PATH);
    });
  }

  it("takes volume_mount_group (the pod's fsGroup) as the mount group; none when empty", () => {
    const withGroup = request({
      volume_capability: { ...CAPABILITY, mount: { ...CAPABILITY.mount, volume_mount_group: '2000' } },
    });
    expect(parsePublishRequest(withGroup).mountGroup).to.equal(2000);
    expect(parsePublishRequest(request())).not.to.have.property('mountGroup');
  });

  it("checks volume_mount_group after upstream's checks", () => {
    const bad = { volume_capability: { ...CAPABILITY, mount: { ...CAPABILITY.mount, volume_mount_group: 'x' } } };
    expect(messageOf(() => parsePublishRequest(request({ ...bad, readonly: false })))).to.equal(RO);
    expect(messageOf(() => parsePublishRequest(request(bad)))).to.match(
      /^volume_capability\.mount\.volume_mount_group "x" is not a group id/,
    );
  });

  it('never puts secrets into a message', () => {
    expect(
      messageOf(() => parsePublishRequest(request({ readonly: false, secrets: { password: 'hunter2' } }))),
    ).to.not.include('hunter2');
  });
});

describe('parseVolumeMountGroup', () => {
  const valid: [string, number | undefined][] = [
    ['', undefined],
    ['0', 0],
    ['1000', 1000],
    ['65534', 65534],
    ['2147483647', 2147483647],
    ['007', 7],
  ];
  for (const [raw, gid] of valid)
    it(`${JSON.stringify(raw)} → ${gid}`, () => expect(parseVolumeMountGroup(raw)).to.equal(gid));

  const MESSAGE = (shown: string) =>
    `volume_capability.mount.volume_mount_group ${shown} is not a group id: send the pod's fsGroup as a decimal number from 0 to 2147483647`;
  const invalid: [string, string][] = [
    ['abc', '"abc"'],
    ['-1', '"-1"'],
    ['2147483648', '"2147483648"'],
    ['4294967295', '"4294967295"'],
    ['99999999999', '"99999999999"'],
    ['1e3', '"1e3"'],
    ['0x10', '"0x10"'],
    [' 1000', '" 1000"'],
    ['1000 ', '"1000 "'],
    ['+5', '"+5"'],
    ['1.5', '"1.5"'],
    ['1000\n', '"1000\\n"'],
    ['x'.repeat(100), `"${'x'.repeat(32)}…"`],
  ];
  for (const [raw, shown] of invalid) {
    it(`${JSON.stringify(raw.slice(0, 20))} is INVALID_ARGUMENT naming the field`, () =>
      expect(messageOf(() => parseVolumeMountGroup(raw))).to.equal(MESSAGE(shown)));
  }
});

describe('parseUnpublishRequest', () => {
  it('returns volume id and target path', () => {
    expect(parseUnpublishRequest({ volume_id: 'v', target_path: '/t' })).to.deep.equal({
      volumeId: 'v',
      targetPath: '/t',
    });
  });
  it('canonicalises the target path as publish does', () => {
    expect(parseUnpublishRequest({ volume_id: 'v', target_path: '/t//a/./b/' }).targetPath).to.equal('/t/a/b');
  });
  const invalid: [string, string, string][] = [
    ['', '', 'Volume ID missing in request'],
    ['', '/t', 'Volume ID missing in request'],
    ['v', '', 'Target path missing in request'],
    ['v', 'rel', 'Target path "rel" must be an absolute path without ".." elements'],
    ['v', '/a/../b', 'Target path "/a/../b" must be an absolute path without ".." elements'],
    ['v', '//', 'Target path "//" is the root directory: name a directory for the volume'],
    ['v', '/a\0b', 'Target path "/a\\u0000b" must not contain a NUL byte'],
  ];
  for (const [volume_id, target_path, message] of invalid) {
    it(`${JSON.stringify({ volume_id, target_path })} → "${message}"`, () =>
      expect(messageOf(() => parseUnpublishRequest({ volume_id, target_path }))).to.equal(message));
  }
});
