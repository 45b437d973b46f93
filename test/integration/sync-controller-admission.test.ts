import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import {
  createSecretSync,
  answerOf,
  installSyncControllerManifests,
  ownedSecret,
  POLICY_CONFIG,
  refusedWith,
  saTokenSecret,
  SECRET_SYNC_RESOURCE,
  type SecretSyncCondition,
  startSyncControllerStack,
  type SyncControllerStack,
  syncControllerClients,
  TEST_TOKEN_AUDIENCES,
  type Answer,
} from '../support/sync-controller.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { until } from '../support/until.js';

// deploy/sync-controller/admission-policies.yaml enforced by a real kube-apiserver on the
// controller's identity (a token of its ServiceAccount; RBAC: deploy/sync-controller/rbac.yaml).
// No controller runs here: the requests are the ones a controller with a bug, or a
// compromised one, could make. installSyncControllerManifests waits until the policies are
// enforced; the update probes below wait again for their own policies. Then the controller
// itself under the policies: what its conditions say when the API server refuses it.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const [AUDIENCE, OTHER_CONFIGURED_AUDIENCE] = TEST_TOKEN_AUDIENCES;

describe('sync controller: admission policies enforced by the API server on its identity', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let controller: CoreV1Api;
  let ns: string;
  const uids = new Map<string, string>();

  /** A SecretSync (created by the admin) to own Secrets: its UID. */
  const createSync = async (name: string) => {
    const created = await createSecretSync(cluster, ns, name, {
      secretProviderClassName: 'none',
      secretObject: { data: [{ sourcePath: 'a', targetKey: 'a' }] },
    });
    uids.set(name, created.metadata.uid);
    return created.metadata.uid;
  };
  const create = (body: V1Secret) => answerOf(controller.createNamespacedSecret({ namespace: ns, body }));
  const token = (spec: { audiences: string[]; expirationSeconds: number }) =>
    answerOf(controller.createNamespacedServiceAccountToken({ namespace: ns, name: 'default', body: { spec } }));
  const expectRefused = (answer: Answer, message: string) => {
    expect(answer, 'refused').to.not.equal('accepted');
    const refusal = answer as Exclude<Answer, 'accepted'>;
    expect(refusal.code, refusal.message).to.equal(403);
    expect(refusal.message, refusal.message).to.include(message);
  };

  before(async () => {
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'ssc-vap');
    ({ core: controller } = await syncControllerClients(cluster));
    for (const name of ['owned', 'tls', 'other-name', 'unlabelled', 'foreign-type'] as const) await createSync(name);
  });

  after(async () => {
    if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  // SSC's message, word for word.
  const allowedTypes = (type: string) =>
    `secrets-store-sync-controller has failed to CREATE secret with ${type} type in the ${ns} namespace. The controller can only create or update secrets in the allowed types list with a single secretsync owner.`;

  it('accepts a Secret of an allowed type owned by the one SecretSync of its name (Opaque, kubernetes.io/tls)', async () => {
    expect(await create(ownedSecret('owned', uids.get('owned') ?? ''))).to.equal('accepted');
    const tls = ownedSecret('tls', uids.get('tls') ?? '', 'kubernetes.io/tls');
    tls.data = { 'tls.crt': '', 'tls.key': '' };
    expect(await create(tls)).to.equal('accepted');
  });

  it('refuses a Secret type not in allowedSecretTypes', async () => {
    const answer = await create(ownedSecret('foreign-type', uids.get('foreign-type') ?? '', 'example.com/custom'));
    expectRefused(answer, allowedTypes('example.com/custom'));
  });

  it('refuses a kubernetes.io/service-account-token Secret, also when allowedSecretTypes lists the type', async () => {
    const sa = saTokenSecret('sa-token');
    // Both policies refuse it; the API server names one of them.
    const refused = await create(sa);
    expect(
      refusedWith(refused, allowedTypes('kubernetes.io/service-account-token')) ||
        refusedWith(refused, 'Secrets of type kubernetes.io/service-account-token are never written'),
      JSON.stringify(refused),
    ).to.equal(true);
    // The type added to the list: the second policy still refuses it. The list is put back
    // after, and the policy seen reading it again, before the next test.
    const config = await cluster.admin.core.readNamespacedConfigMap(POLICY_CONFIG);
    const types = config.data?.['allowedSecretTypes'] ?? '';
    const setTypes = (value: string) =>
      cluster.admin.core.patchNamespacedConfigMap({
        ...POLICY_CONFIG,
        body: [{ op: 'replace', path: '/data/allowedSecretTypes', value }],
      });
    const never = `secrets-store-sync-controller may not CREATE Secret ${ns}/sa-token: Secrets of type kubernetes.io/service-account-token are never written`;
    // A marker type added with it tells when the API server reads the changed list, and the
    // restored one (a refusal names one of the policies that refuse, not always the same).
    const marker = () =>
      answerOf(
        controller.createNamespacedSecret({
          namespace: ns,
          body: ownedSecret('marker', 'u-marker', 'example.com/marker'),
          dryRun: 'All',
        }),
      );
    await setTypes(`${types},kubernetes.io/service-account-token,example.com/marker`);
    try {
      await until('the changed list in effect', async () => (await marker()) === 'accepted');
      expectRefused(await create(sa), never);
    } finally {
      await setTypes(types);
      await until('the list put back in effect', async () =>
        refusedWith(await marker(), allowedTypes('example.com/marker')),
      );
    }
  });

  it('refuses a Secret without a SecretSync owner, with one of another name, another kind, or two owners', async () => {
    const uid = uids.get('other-name') ?? '';
    const cases: [string, V1Secret][] = [
      ['no owner', { metadata: { name: 'no-owner', labels: { 'secrets-store.sync.x-k8s.io': '' } }, type: 'Opaque' }],
      [
        'a SecretSync of another name',
        {
          ...ownedSecret('other-name', uid),
          metadata: { ...ownedSecret('other-name', uid).metadata, name: 'renamed' },
        },
      ],
      [
        'another kind',
        {
          ...ownedSecret('cm-owned', uid),
          metadata: {
            name: 'cm-owned',
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-owned', uid }],
          },
        },
      ],
      [
        'two owners',
        {
          ...ownedSecret('owned', uid),
          metadata: {
            name: 'two-owners',
            ownerReferences: [
              { apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name: 'two-owners', uid },
              {
                apiVersion: 'secret-sync.x-k8s.io/v1alpha1',
                kind: 'SecretSync',
                name: 'owned',
                uid: uids.get('owned') ?? '',
              },
            ],
          },
        },
      ],
    ];
    for (const [what, secret] of cases) {
      const answer = await create(secret);
      expect(refusedWith(answer, allowedTypes('Opaque')), `${what}: ${JSON.stringify(answer)}`).to.equal(true);
    }
  });

  it("refuses to update a Secret that was not the SecretSync's, and one without the controller's label", async () => {
    // Made by someone else: no owner (the controller never adopts one).
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'foreign', labels: { 'secrets-store.sync.x-k8s.io': '' } }, type: 'Opaque' },
    });
    const adopt = (dryRun?: 'All') =>
      answerOf(
        controller.patchNamespacedSecret({
          name: 'foreign',
          namespace: ns,
          dryRun,
          body: [
            {
              op: 'add',
              path: '/metadata/ownerReferences',
              value: [{ apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name: 'foreign', uid: 'u-1' }],
            },
          ],
        }),
      );
    const oldOwner = `secrets-store-sync-controller may not UPDATE Secret ${ns}/foreign: it may only update a Secret that already had an allowed type and exactly one SecretSync owner of the same name`;
    await until('the old-object policy refuses', async () => refusedWith(await adopt('All'), oldOwner));
    expectRefused(await adopt(), oldOwner);

    // Owned by its SecretSync but without the label (an edit took it off).
    const unlabelled = ownedSecret('unlabelled', uids.get('unlabelled') ?? '');
    unlabelled.metadata = { ...unlabelled.metadata, labels: {} };
    await cluster.admin.core.createNamespacedSecret({ namespace: ns, body: unlabelled });
    const relabel = (dryRun?: 'All') =>
      answerOf(
        controller.patchNamespacedSecret({
          name: 'unlabelled',
          namespace: ns,
          dryRun,
          body: [{ op: 'add', path: '/metadata/labels', value: { 'secrets-store.sync.x-k8s.io': '' } }],
        }),
      );
    const label = `secrets-store-sync-controller may not UPDATE Secret ${ns}/unlabelled: it has no label secrets-store.sync.x-k8s.io=""`;
    await until('the label policy refuses', async () => refusedWith(await relabel('All'), label));
    expectRefused(await relabel(), label);

    // Its own Secret: updates pass.
    const update = await answerOf(
      controller.patchNamespacedSecret({
        name: 'owned',
        namespace: ns,
        body: [{ op: 'replace', path: '/data/k', value: Buffer.from('v2').toString('base64') }],
      }),
    );
    expect(update).to.equal('accepted');
  });

  it('accepts a TokenRequest for one configured audience with expirationSeconds 600, and refuses any other', async () => {
    expect(await token({ audiences: [AUDIENCE], expirationSeconds: 600 })).to.equal('accepted');
    expect(await token({ audiences: [OTHER_CONFIGURED_AUDIENCE], expirationSeconds: 600 })).to.equal('accepted');
    const refusal = `secrets-store-sync-controller may not request a token of ServiceAccount ${ns}/default: only for exactly one audience of tokenRequestAudience (ConfigMap kube-system/secrets-store-sync-controller-config), with expirationSeconds 600`;
    const refused: [string, { audiences: string[]; expirationSeconds: number }][] = [
      ['another audience', { audiences: ['vault'], expirationSeconds: 600 }],
      ['another expiration', { audiences: [AUDIENCE], expirationSeconds: 3600 }],
      ['two audiences', { audiences: [AUDIENCE, OTHER_CONFIGURED_AUDIENCE], expirationSeconds: 600 }],
      ['no audience (the API server default)', { audiences: [], expirationSeconds: 600 }],
    ];
    for (const [what, spec] of refused) {
      const answer = await token(spec);
      expect(refusedWith(answer, refusal), `${what}: ${JSON.stringify(answer)}`).to.equal(true);
    }
  });

  it('binds only the controller: the admin writes any Secret and mints any token', async () => {
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'admin-made' }, type: 'example.com/custom' },
    });
    await cluster.admin.core.createNamespacedServiceAccountToken({
      namespace: ns,
      name: 'default',
      body: { spec: { audiences: ['vault'], expirationSeconds: 3600 } },
    });
  });
});

describe('sync controller: what it reports when an admission policy refuses it', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let ns: string;
  let stack: SyncControllerStack | undefined;

  const createSync = (name: string, type: string) =>
    createSecretSync(cluster, ns, name, {
      secretProviderClassName: 'files',
      secretObject: { type, data: [{ sourcePath: 'password', targetKey: 'password' }] },
    });
  const failedCondition = (name: string) =>
    until(`a failed SecretCreated condition on ${name}`, async () => {
      const ss = (await cluster.admin.custom.getNamespacedCustomObject({
        ...SECRET_SYNC_RESOURCE,
        namespace: ns,
        name,
      })) as { status?: { conditions?: SecretSyncCondition[] } };
      const c = ss.status?.conditions?.find((x) => x.type === 'SecretCreated');
      return c?.status === 'False' ? c : undefined;
    });

  before(async () => {
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'ssc-vap-ctl');
    await createSecretProviderClass(cluster, ns, 'files', {
      provider: 'file',
      parameters: { objects: JSON.stringify([{ objectName: 'password', sourcePath: 'password' }]) },
    });
  });

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  after(async () => {
    if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("a Secret type outside allowedSecretTypes: ControllerPatchError with the policy's message, no Secret", async () => {
    stack = await startSyncControllerStack(cluster, { password: 'pw' }, ['--rotation-poll-interval=0']);
    await createSync('custom-type', 'example.com/custom');
    const { value } = await failedCondition('custom-type');
    expect(value.reason).to.equal('ControllerPatchError');
    expect(value.message).to.match(
      // The API server's message as it is, as SSC shows it.
      new RegExp(`^failed to patch secret "custom-type": secrets "custom-type" is forbidden: `),
    );
    expect(value.message, value.message).to.include(
      `secrets-store-sync-controller has failed to CREATE secret with example.com/custom type in the ${ns} namespace. The controller can only create or update secrets in the allowed types list with a single secretsync owner.`,
    );
    expect(
      await answerOf(cluster.admin.core.readNamespacedSecret({ namespace: ns, name: 'custom-type' })),
    ).to.deep.include({ code: 404 });
  });

  it("an audience the ConfigMap does not list: ControllerSyncError with the policy's message", async () => {
    stack = await startSyncControllerStack(cluster, { password: 'pw' }, [
      '--rotation-poll-interval=0',
      '--token-request-audience=not-listed',
    ]);
    await createSync('other-audience', 'Opaque');
    const { value } = await failedCondition('other-audience');
    expect(value.reason).to.equal('ControllerSyncError');
    expect(value.message).to.match(
      new RegExp(
        `^fetching secrets from the provider failed: Kubernetes API refused to request a token for ServiceAccount ${ns}/default \\(audience not-listed\\): HTTP 403 `,
      ),
    );
    expect(value.message, value.message).to.include(
      `secrets-store-sync-controller may not request a token of ServiceAccount ${ns}/default: only for exactly one audience of tokenRequestAudience`,
    );
  });
});
