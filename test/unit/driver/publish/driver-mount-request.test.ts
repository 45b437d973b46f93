import { expect } from 'chai';
import {
  buildMountRequest,
  kubeletOwnedParameters,
  mountAttributes,
  SERVICE_ACCOUNT_TOKENS_KEY,
  type MountInput,
} from '../../../../driver/publish/mount-request.js';

const TOKENS = '{"vault":{"token":"eyJ.tok","expirationTimestamp":"2026-01-01T00:00:00Z"}}';
const input = (o: Partial<MountInput> = {}): MountInput => ({
  parameters: {},
  volumeContext: {},
  secrets: {},
  targetPath: '/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/v/mount',
  defaultMode: 0o644,
  currentVersions: [],
  ...o,
});

describe('buildMountRequest', () => {
  it('overlays parameters with every volume_context entry', () => {
    const req = buildMountRequest(
      input({
        parameters: { objects: 'list', roleName: 'from-spc', secretProviderClass: 'spoofed' },
        volumeContext: { secretProviderClass: 'real', roleName: 'from-pod', 'csi.storage.k8s.io/pod.name': 'p' },
      }),
    );
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({
      objects: 'list',
      roleName: 'from-pod',
      secretProviderClass: 'real',
      'csi.storage.k8s.io/pod.name': 'p',
    });
  });

  it('sends permission "420" for 0644, the target path, and "{}" when there are no secrets', () => {
    const req = buildMountRequest(input());
    expect(req).to.deep.equal({
      attributes: '{}',
      secrets: '{}',
      target_path: '/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/v/mount',
      permission: '420',
      current_object_version: [],
    });
  });

  for (const [mode, text] of [
    [0o600, '384'],
    [0o400, '256'],
    [0o777, '511'],
    [0, '0'],
  ] as const) {
    it(`permission for 0${mode.toString(8)} is "${text}"`, () =>
      expect(buildMountRequest(input({ defaultMode: mode })).permission).to.equal(text));
  }

  it('passes nodePublishSecretRef data as JSON', () => {
    expect(
      JSON.parse(buildMountRequest(input({ secrets: { clientid: 'id', clientsecret: 's' } })).secrets ?? ''),
    ).to.deep.equal({ clientid: 'id', clientsecret: 's' });
  });

  it('moves service-account tokens from secrets into attributes', () => {
    const secrets = { [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS, clientid: 'id' };
    const req = buildMountRequest(input({ secrets, volumeContext: { a: 'b' } }));
    expect(JSON.parse(req.secrets ?? '')).to.deep.equal({ clientid: 'id' });
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({ a: 'b', [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS });
    expect(secrets).to.have.property(SERVICE_ACCOUNT_TOKENS_KEY, TOKENS);
  });

  it('secrets become "{}" when the tokens were the only entry', () => {
    expect(buildMountRequest(input({ secrets: { [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS } })).secrets).to.equal('{}');
  });

  it('lets tokens delivered in secrets beat a volume_context entry, as upstream v1.6.1 does', () => {
    const req = buildMountRequest(
      input({
        secrets: { [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS },
        volumeContext: { [SERVICE_ACCOUNT_TOKENS_KEY]: 'from-volume-attributes' },
      }),
    );
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({ [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS });
    expect(req.secrets).to.equal('{}');
  });

  it('never forwards a class parameter under csi.storage.k8s.io/, even when kubelet sent no such key', () => {
    const req = buildMountRequest(
      input({
        parameters: {
          [SERVICE_ACCOUNT_TOKENS_KEY]: 'class-token',
          'csi.storage.k8s.io/pod.name': 'spoofed',
          roleName: 'r',
        },
      }),
    );
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({ roleName: 'r' });
  });

  it('fills current_object_version with what is mounted, in the given order', () => {
    const req = buildMountRequest(
      input({
        currentVersions: [
          { id: 'b', version: '2' },
          { id: 'a', version: '1' },
        ],
      }),
    );
    expect(req.current_object_version).to.deep.equal([
      { id: 'b', version: '2' },
      { id: 'a', version: '1' },
    ]);
  });
});

describe('mountAttributes: who wins a key', () => {
  const K = SERVICE_ACCOUNT_TOKENS_KEY;
  const cases: [string, Record<string, string>, Record<string, string>, string | undefined, Record<string, string>][] =
    [
      ["class tokens vs tokens in secrets: kubelet's", { [K]: 'class' }, {}, 'kubelet', { [K]: 'kubelet' }],
      [
        "class tokens vs tokens in volume_context: kubelet's",
        { [K]: 'class' },
        { [K]: 'kubelet' },
        undefined,
        { [K]: 'kubelet' },
      ],
      ['class tokens and no tokens from kubelet: none', { [K]: 'class' }, {}, undefined, {}],
      [
        "volume_context tokens vs tokens in secrets: the secrets'",
        {},
        { [K]: 'attribute' },
        'kubelet',
        { [K]: 'kubelet' },
      ],
      [
        "class pod info vs kubelet pod info: kubelet's",
        { 'csi.storage.k8s.io/pod.name': 'spoof' },
        { 'csi.storage.k8s.io/pod.name': 'app' },
        undefined,
        { 'csi.storage.k8s.io/pod.name': 'app' },
      ],
      [
        'class pod info without podInfoOnMount: dropped',
        { 'csi.storage.k8s.io/pod.namespace': 'kube-system' },
        {},
        undefined,
        {},
      ],
      [
        'a lookalike key outside the prefix: kept',
        { 'csi.storage.k8s.io.tokens': 'x', 'storage.k8s.io/x': 'y' },
        {},
        undefined,
        { 'csi.storage.k8s.io.tokens': 'x', 'storage.k8s.io/x': 'y' },
      ],
      [
        'ordinary parameters vs volume_context: volume_context',
        { roleName: 'class', objects: 'o' },
        { roleName: 'pod' },
        undefined,
        { roleName: 'pod', objects: 'o' },
      ],
    ];
  for (const [name, parameters, volumeContext, secretsTokens, want] of cases) {
    it(name, () => expect(mountAttributes(parameters, volumeContext, secretsTokens)).to.deep.equal(want));
  }

  it('kubeletOwnedParameters names the dropped keys, sorted, and nothing else', () => {
    expect(kubeletOwnedParameters({ roleName: 'r', [K]: 't', 'csi.storage.k8s.io/pod.name': 'p' })).to.deep.equal([
      'csi.storage.k8s.io/pod.name',
      K,
    ]);
    expect(kubeletOwnedParameters({ roleName: 'r' })).to.deep.equal([]);
  });
});
