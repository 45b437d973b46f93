import { expect } from 'chai';
import { parseSecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import { SscError } from '../../../../lib/errors.js';

const spc = (o: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'secrets-store.csi.x-k8s.io/v1',
  kind: 'SecretProviderClass',
  metadata: { name: 'db', namespace: 'team' },
  spec: { provider: 'vault', parameters: { roleName: 'r', objects: '- objectName: a' }, ...spec },
  ...o,
});

function failure(obj: unknown, ns?: string): SscError {
  try {
    parseSecretProviderClass(obj, ns);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('invalid-argument');
    expect((err as SscError).reason).to.equal('InvalidSecretProviderClass');
    return err as SscError;
  }
  throw new Error('expected the SecretProviderClass to be rejected');
}

describe('parseSecretProviderClass', () => {
  for (const version of ['v1', 'v1alpha1']) {
    it(`accepts ${version}`, () => {
      expect(parseSecretProviderClass(spc({ apiVersion: `secrets-store.csi.x-k8s.io/${version}` }))).to.deep.equal({
        namespace: 'team',
        name: 'db',
        provider: 'vault',
        parameters: { roleName: 'r', objects: '- objectName: a' },
        secretObjects: [],
        annotations: {},
      });
    });
  }

  it('uses the default namespace when metadata.namespace is missing or empty', () => {
    expect(parseSecretProviderClass(spc({ metadata: { name: 'db' } })).namespace).to.equal('default');
    expect(parseSecretProviderClass(spc({ metadata: { name: 'db', namespace: '' } }), 'local').namespace).to.equal(
      'local',
    );
  });

  it('treats missing parameters as empty and reads annotations', () => {
    const c = parseSecretProviderClass(
      spc({ metadata: { name: 'db', annotations: { a: 'b' } }, spec: { provider: 'file' } }),
    );
    expect([c.parameters, c.annotations, c.secretObjects]).to.deep.equal([{}, { a: 'b' }, []]);
  });

  it('parses secretObjects, type defaulting to Opaque', () => {
    const c = parseSecretProviderClass(
      spc(
        {},
        {
          secretObjects: [
            { secretName: 's1', data: [{ objectName: 'a', key: 'username' }] },
            {
              secretName: 's2',
              type: 'kubernetes.io/tls',
              labels: { app: 'x' },
              annotations: { n: 'o' },
              data: [
                { objectName: 'c', key: 'tls.crt' },
                { objectName: 'k', key: 'tls.key' },
              ],
            },
            { secretName: 's3', type: '' },
          ],
        },
      ),
    );
    expect(c.secretObjects).to.deep.equal([
      { secretName: 's1', type: 'Opaque', labels: {}, annotations: {}, data: [{ objectName: 'a', key: 'username' }] },
      {
        secretName: 's2',
        type: 'kubernetes.io/tls',
        labels: { app: 'x' },
        annotations: { n: 'o' },
        data: [
          { objectName: 'c', key: 'tls.crt' },
          { objectName: 'k', key: 'tls.key' },
        ],
      },
      { secretName: 's3', type: 'Opaque', labels: {}, annotations: {}, data: [] },
    ]);
  });

  const W = 'SecretProviderClass team/db: ';
  const invalid: [string, unknown, string][] = [
    ['not an object', 'text', 'SecretProviderClass (unnamed): not an object'],
    ['null', null, 'SecretProviderClass (unnamed): not an object'],
    [
      'no name',
      spc({ metadata: { namespace: 'team' } }),
      'SecretProviderClass team/(unnamed): metadata.name is required',
    ],
    [
      'wrong kind',
      spc({ kind: 'Secret' }),
      `${W}expected kind SecretProviderClass in group secrets-store.csi.x-k8s.io, got Secret secrets-store.csi.x-k8s.io/v1`,
    ],
    [
      'wrong group',
      spc({ apiVersion: 'v1' }),
      `${W}expected kind SecretProviderClass in group secrets-store.csi.x-k8s.io, got SecretProviderClass v1`,
    ],
    ['missing provider', spc({}, { provider: undefined }), `${W}spec.provider is required`],
    ['empty provider', spc({}, { provider: '' }), `${W}spec.provider is required`],
    ['missing spec', spc({ spec: undefined }), `${W}spec.provider is required`],
    [
      'parameter number',
      spc({}, { parameters: { port: 8200 } }),
      `${W}spec.parameters.port must be a string (quote numbers and booleans in YAML)`,
    ],
    [
      'parameter boolean',
      spc({}, { parameters: { a: 'x', skip: true } }),
      `${W}spec.parameters.skip must be a string (quote numbers and booleans in YAML)`,
    ],
    ['parameters a list', spc({}, { parameters: ['a'] }), `${W}spec.parameters must be a map of strings`],
    [
      'secretObjects not a list',
      spc({}, { secretObjects: { secretName: 's' } }),
      `${W}spec.secretObjects must be a list`,
    ],
    ['secretObject not an object', spc({}, { secretObjects: ['s'] }), `${W}spec.secretObjects[0] must be an object`],
    [
      'missing secretName',
      spc({}, { secretObjects: [{ secretName: 's' }, { data: [] }] }),
      `${W}spec.secretObjects[1].secretName is required`,
    ],
    [
      'type not a string',
      spc({}, { secretObjects: [{ secretName: 's', type: 1 }] }),
      `${W}spec.secretObjects[0].type must be a string`,
    ],
    [
      'data not a list',
      spc({}, { secretObjects: [{ secretName: 's', data: {} }] }),
      `${W}spec.secretObjects[0].data must be a list`,
    ],
    [
      'missing objectName',
      spc({}, { secretObjects: [{ secretName: 's', data: [{ objectName: 'a', key: 'k' }, { key: 'k' }] }] }),
      `${W}spec.secretObjects[0].data[1].objectName is required`,
    ],
    [
      'missing key',
      spc({}, { secretObjects: [{ secretName: 's', data: [{ objectName: 'a' }] }] }),
      `${W}spec.secretObjects[0].data[0].key is required`,
    ],
    [
      'data entry not an object',
      spc({}, { secretObjects: [{ secretName: 's', data: ['x'] }] }),
      `${W}spec.secretObjects[0].data[0].objectName is required`,
    ],
    [
      'label not a string',
      spc({}, { secretObjects: [{ secretName: 's', labels: { a: 1 } }] }),
      `${W}spec.secretObjects[0].labels.a must be a string (quote numbers and booleans in YAML)`,
    ],
  ];
  for (const [name, obj, message] of invalid) {
    it(`rejects ${name}`, () => expect(failure(obj).message).to.equal(message));
  }

  it('drops spaces around objectName and key, as upstream', () => {
    const c = parseSecretProviderClass(
      spc({}, { secretObjects: [{ secretName: 's', data: [{ objectName: ' db/pw\t', key: ' password ' }] }] }),
    );
    expect(c.secretObjects[0]?.data).to.deep.equal([{ objectName: 'db/pw', key: 'password' }]);
    expect(
      failure(spc({}, { secretObjects: [{ secretName: 's', data: [{ objectName: 'a', key: '  ' }] }] })).message,
    ).to.match(/data\[0\]\.key is required/);
  });

  it("refuses a secretObjects objectName that leaves the volume (it would read the node's files)", () => {
    const obj = {
      apiVersion: 'secrets-store.csi.x-k8s.io/v1',
      kind: 'SecretProviderClass',
      metadata: { name: 'x', namespace: 'n' },
      spec: {
        provider: 'p',
        secretObjects: [{ secretName: 's', data: [{ objectName: '../../var/run/secrets/token', key: 'k' }] }],
      },
    };
    expect(() => parseSecretProviderClass(obj)).to.throw(
      /objectName "\.\.\/\.\.\/var\/run\/secrets\/token" is not a path inside the volume/,
    );
  });
});
