import { expect } from 'chai';
import { buildMountRequest, SERVICE_ACCOUNT_TOKENS_KEY, type MountInput } from '../../driver/provider-client/mount-request.js';

const TOKENS = '{"vault":{"token":"eyJ.tok","expirationTimestamp":"2026-01-01T00:00:00Z"}}';
const input = (o: Partial<MountInput> = {}): MountInput => ({
  parameters: {}, volumeContext: {}, secrets: {}, targetPath: '/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/v/mount',
  defaultMode: 0o644, currentVersions: [], ...o,
});

describe('buildMountRequest', () => {
  it('overlays parameters with every volume_context entry', () => {
    const req = buildMountRequest(input({
      parameters: { objects: 'list', roleName: 'from-spc', secretProviderClass: 'spoofed' },
      volumeContext: { secretProviderClass: 'real', roleName: 'from-pod', 'csi.storage.k8s.io/pod.name': 'p' },
    }));
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({
      objects: 'list', roleName: 'from-pod', secretProviderClass: 'real', 'csi.storage.k8s.io/pod.name': 'p',
    });
  });

  it('sends permission "420" for 0644, the target path, and "{}" when there are no secrets', () => {
    const req = buildMountRequest(input());
    expect(req).to.deep.equal({
      attributes: '{}', secrets: '{}', target_path: '/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/v/mount', permission: '420', current_object_version: [],
    });
  });

  for (const [mode, text] of [[0o600, '384'], [0o400, '256'], [0o777, '511'], [0, '0']] as const) {
    it(`permission for 0${mode.toString(8)} is "${text}"`, () => expect(buildMountRequest(input({ defaultMode: mode })).permission).to.equal(text));
  }

  it('passes nodePublishSecretRef data as JSON', () => {
    expect(JSON.parse(buildMountRequest(input({ secrets: { clientid: 'id', clientsecret: 's' } })).secrets ?? '')).to.deep.equal({ clientid: 'id', clientsecret: 's' });
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

  it('keeps tokens already in volume_context', () => {
    const req = buildMountRequest(input({ secrets: { [SERVICE_ACCOUNT_TOKENS_KEY]: 'from-secrets' }, volumeContext: { [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS } }));
    expect(JSON.parse(req.attributes ?? '')).to.deep.equal({ [SERVICE_ACCOUNT_TOKENS_KEY]: TOKENS });
    expect(req.secrets).to.equal('{}');
  });

  it('fills current_object_version with what is mounted, in the given order', () => {
    const req = buildMountRequest(input({ currentVersions: [{ id: 'b', version: '2' }, { id: 'a', version: '1' }] }));
    expect(req.current_object_version).to.deep.equal([{ id: 'b', version: '2' }, { id: 'a', version: '1' }]);
  });
});
