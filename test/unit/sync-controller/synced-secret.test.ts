import { expect } from 'chai';
import type { Secret } from '../../../driver/k8s/client/types.js';
import type { SecretSync } from '../../../sync-controller/secret-sync.js';
import {
  ownershipProblem,
  reservedKeyProblem,
  secretApplyBody,
  secretMatches,
  secretTypeProblem,
  syncedSecretData,
} from '../../../sync-controller/synced-secret.js';

function sync(secretObject: SecretSync['spec']['secretObject']): SecretSync {
  return {
    metadata: { name: 'app', namespace: 'ns', uid: 'uid-1' },
    spec: { secretProviderClassName: 'c', serviceAccountName: 'sa', secretObject },
  };
}
const data = [{ sourcePath: 'password', targetKey: 'pw' }];

describe('sync-controller synced Secret rules', () => {
  const reserved: [string, SecretSync['spec']['secretObject'], string | undefined][] = [
    ['none', { data }, undefined],
    [
      'reserved label with a value',
      { data, labels: { 'secrets-store.sync.x-k8s.io': 'x' } },
      'InvalidClusterSecretLabelError',
    ],
    [
      'reserved label, empty (upstream lets it pass)',
      { data, labels: { 'secrets-store.sync.x-k8s.io': '' } },
      undefined,
    ],
    [
      'reserved annotation',
      { data, annotations: { 'secrets-store.sync.x-k8s.io': '' } },
      'InvalidClusterSecretAnnotationError',
    ],
  ];
  for (const [what, object, reason] of reserved)
    it(`reserved keys: ${what}`, () => expect(reservedKeyProblem(sync(object))?.reason).to.equal(reason));

  const types: [string, string | undefined][] = [
    ['Opaque', undefined],
    ['kubernetes.io/tls', undefined],
    ['example.com/custom', undefined],
    [
      'kubernetes.io/service-account-token',
      'failed to patch secret "app": Secrets of type kubernetes.io/service-account-token are never written',
    ],
  ];
  for (const [type, message] of types)
    it(`type ${type}`, () => expect(secretTypeProblem(sync({ data, type }))?.message).to.equal(message));

  const owned = (owners: Secret['metadata']): Secret => ({ metadata: owners ?? {} });
  const ownership: [string, Secret | undefined, boolean][] = [
    ['absent', undefined, true],
    [
      'owned by this SecretSync',
      owned({
        ownerReferences: [
          { apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name: 'app', uid: 'uid-1' },
        ],
      }),
      true,
    ],
    ['no owner', owned({}), false],
    [
      'a SecretSync of the same name, recreated',
      owned({
        ownerReferences: [{ apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name: 'app', uid: 'old' }],
      }),
      false,
    ],
    [
      'another kind with the UID',
      owned({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'app', uid: 'uid-1' }] }),
      false,
    ],
  ];
  for (const [what, existing, writable] of ownership)
    it(`ownership: ${what}`, () => expect(ownershipProblem(existing, sync({ data })) === undefined).to.equal(writable));

  it('apply body: name, labels with the controller label, one owner, base64 data, type', () => {
    const body = secretApplyBody(sync({ data, labels: { a: 'b' } }), new Map([['pw', Buffer.from('x')]]));
    expect(body).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'app',
        namespace: 'ns',
        labels: { a: 'b', 'secrets-store.sync.x-k8s.io': '' },
        ownerReferences: [
          { apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name: 'app', uid: 'uid-1' },
        ],
      },
      data: { pw: 'eA==' },
      type: 'Opaque',
    });
  });

  it('data: sourcePath → targetKey; a missing sourcePath names it, not the contents', () => {
    const files = new Map([['password', Buffer.from('secret-value')]]);
    expect(syncedSecretData(sync({ data }), files).get('pw')?.toString()).to.equal('secret-value');
    expect(() => syncedSecretData(sync({ data: [{ sourcePath: 'nope', targetKey: 'k' }] }), files))
      .to.throw(/"nope"/)
      .and.not.to.match(/secret-value/);
  });
});

describe('sync-controller secretMatches (drift)', () => {
  const ss: SecretSync = {
    metadata: { name: 'app', namespace: 'ns', uid: 'uid-1' },
    spec: {
      secretProviderClassName: 'c',
      serviceAccountName: 'sa',
      secretObject: { data: [{ sourcePath: 'p', targetKey: 'pw' }], labels: { a: 'b' }, annotations: { n: 'v' } },
    },
  };
  const body = secretApplyBody(ss, new Map([['pw', Buffer.from('x')]]));
  const stored = (): Secret => structuredClone({ ...body, metadata: { ...body.metadata, resourceVersion: '5' } });
  const edits: [string, (s: Secret) => Secret | undefined, boolean][] = [
    ['as written', (s) => s, true],
    [
      'with labels and annotations added by others',
      (s) => ({ ...s, metadata: { ...s.metadata, labels: { ...s.metadata?.labels, x: 'y' } } }),
      true,
    ],
    ['deleted', () => undefined, false],
    ['a value edited', (s) => ({ ...s, data: { pw: 'eQ==' } }), false],
    ['a key added', (s) => ({ ...s, data: { ...s.data, extra: 'eQ==' } }), false],
    ['a label removed', (s) => ({ ...s, metadata: { ...s.metadata, labels: { a: 'b' } } }), false],
    ['the owner reference removed', (s) => ({ ...s, metadata: { ...s.metadata, ownerReferences: [] } }), false],
  ];
  for (const [what, edit, matches] of edits)
    it(what, () => expect(secretMatches(edit(stored()), body)).to.equal(matches));
});
