import { expect } from 'chai';
import { parseMountRequest } from '../../../../providers/framework/mount-request.js';
import type { MountRequest__Output } from '../../../../proto/gen/v1alpha1/MountRequest.js';
import { SscError } from '../../../../lib/errors.js';

const SECRET = 'hunter2-Zq9';
const raw = (o: Partial<MountRequest__Output> = {}): MountRequest__Output => ({
  attributes: '{"objects":"- objectName: a","csi.storage.k8s.io/pod.name":"p"}',
  secrets: `{"password":"${SECRET}"}`,
  target_path: '/var/lib/kubelet/pods/x/volumes/v/mount',
  permission: '420',
  current_object_version: [
    { id: 'a', version: '1' },
    { id: 'b', version: '2' },
  ],
  ...o,
});

function failure(r: MountRequest__Output): SscError {
  try {
    parseMountRequest(r);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
      'invalid-argument',
      'InvalidMountRequest',
    ]);
    return err as SscError;
  }
  throw new Error('expected the request to be rejected');
}

describe('parseMountRequest', () => {
  it('parses a full request', () => {
    const req = parseMountRequest(raw());
    expect(req.attributes).to.deep.equal({ objects: '- objectName: a', 'csi.storage.k8s.io/pod.name': 'p' });
    expect(req.secrets).to.deep.equal({ password: SECRET });
    expect(req.targetPath).to.equal('/var/lib/kubelet/pods/x/volumes/v/mount');
    expect(req.permission).to.equal(0o644);
    expect([...req.currentObjectVersions]).to.deep.equal([
      ['a', '1'],
      ['b', '2'],
    ]);
  });

  // 'null' is what the Go driver v1.6.1 sends for a pod without nodePublishSecretRef.
  const okSecrets: [string, Record<string, string>][] = [
    ['', {}],
    ['{}', {}],
    ['null', {}],
    [' null\n', {}],
  ];
  for (const [secrets, expected] of okSecrets) {
    it(`secrets ${JSON.stringify(secrets)} → {}`, () =>
      expect(parseMountRequest(raw({ secrets })).secrets).to.deep.equal(expected));
  }

  it('parses the request the Go driver v1.6.1 sends for a pod without nodePublishSecretRef', () => {
    // json.Marshal output: keys sorted, <, > and & escaped as \u003c, \u003e, \u0026; no versions.
    const req = parseMountRequest({
      attributes:
        '{"csi.storage.k8s.io/ephemeral":"true","csi.storage.k8s.io/pod.name":"web-0","csi.storage.k8s.io/pod.namespace":"default",' +
        '"csi.storage.k8s.io/pod.uid":"0c3b","csi.storage.k8s.io/serviceAccount.name":"default","objects":"- objectName: a\\u0026b\\n","secretProviderClass":"app"}',
      secrets: 'null',
      target_path: '/var/lib/kubelet/pods/0c3b/volumes/kubernetes.io~csi/secrets/mount',
      permission: '420',
      current_object_version: [],
    });
    expect(req.secrets).to.deep.equal({});
    expect(req.attributes.objects).to.equal('- objectName: a&b\n');
    expect(req.attributes.secretProviderClass).to.equal('app');
    expect(req.permission).to.equal(0o644);
    expect(req.currentObjectVersions.size).to.equal(0);
  });

  const okPermission: [string, number][] = [
    ['420', 420],
    ['0', 0],
    ['511', 511],
    ['384', 384],
  ];
  for (const [permission, mode] of okPermission) {
    it(`permission ${JSON.stringify(permission)} → ${mode}`, () =>
      expect(parseMountRequest(raw({ permission })).permission).to.equal(mode));
  }

  // One message for unparsable and out-of-range values (providers/framework/mount-request.ts as of this run).
  const NUMBER = 'permission must be a JSON number such as "420" (0644), between 0 and 511 (0777)';
  const RANGE = NUMBER;
  const invalid: [string, Partial<MountRequest__Output>, string][] = [
    ['attributes empty', { attributes: '' }, 'attributes is not valid JSON'],
    ['attributes not JSON', { attributes: '{roleName: r}' }, 'attributes is not valid JSON'],
    ['attributes a list', { attributes: '["a"]' }, 'attributes must be a JSON object'],
    ['attributes null', { attributes: 'null' }, 'attributes must be a JSON object'],
    ['attributes a string', { attributes: '"x"' }, 'attributes must be a JSON object'],
    ['attribute not a string', { attributes: '{"a":"b","n":1}' }, 'attributes.n must be a string'],
    ['attribute an object', { attributes: '{"o":{}}' }, 'attributes.o must be a string'],
    ['secrets not JSON', { secrets: `{"password":"${SECRET}"` }, 'secrets is not valid JSON'],
    ['secrets a string', { secrets: '"null"' }, 'secrets must be a JSON object'],
    ['secrets false', { secrets: 'false' }, 'secrets must be a JSON object'],
    ['secrets a list', { secrets: `["${SECRET}"]` }, 'secrets must be a JSON object'],
    ['secret not a string', { secrets: `{"password":["${SECRET}"]}` }, 'secrets.password must be a string'],
    ['secret a number', { secrets: '{"pin":987654}' }, 'secrets.pin must be a string'],
    ['empty target path', { target_path: '' }, 'targetPath is required'],
    ['permission empty', { permission: '' }, NUMBER],
    // Go providers read null as mode 0000; no driver sends it, so it stays an error.
    ['permission null', { permission: 'null' }, NUMBER],
    ['permission octal text', { permission: '0644' }, NUMBER],
    ['permission a JSON string', { permission: '"0644"' }, RANGE],
    ['permission a JSON string of digits', { permission: '"420"' }, RANGE],
    ['permission 512', { permission: '512' }, RANGE],
    ['permission negative', { permission: '-1' }, RANGE],
    ['permission fractional', { permission: '420.5' }, RANGE],
  ];
  for (const [name, o, message] of invalid) {
    it(`rejects ${name}: "${message}"`, () => {
      const err = failure(raw(o));
      expect(err.message).to.equal(message);
      expect(err.message).to.not.include(SECRET);
      expect(err.message).to.not.include('987654');
    });
  }
});
