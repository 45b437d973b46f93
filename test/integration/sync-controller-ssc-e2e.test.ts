import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startControllerManager,
  untilGarbageCollectorWorks,
  type ControllerManager,
} from '../support/controller-manager.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { kubectl, kubectlOk } from '../support/kubectl.js';
import { auditedCalls } from '../support/rbac-identity.js';
import {
  installSyncControllerManifests,
  SECRET_SYNC_RESOURCE,
  type SecretSyncCondition,
  startSyncControllerWith,
  SYNC_CONTROLLER_USER,
  type SyncControllerStack,
  upstreamFakeProvider,
} from '../support/sync-controller.js';
import { statusOf, until } from '../support/until.js';

// Upstream SSC's own end-to-end objects (test/fixtures/ssc-e2e: its hack/localsetup class and
// SecretSync, its test/bats/tests/e2e_provider SecretSyncs, byte for byte), applied unchanged
// with kubectl as its test/bats/e2e-provider.bats applies them, to our controller (bound by
// deploy/sync-controller/rbac.yaml) with upstream's fake provider serving the class's provider
// `e2e-provider` (`foo` → `secret`, what upstream's e2e provider serves). Each bats case's
// assertions are made here; only the namespaces are the test's own (see the fixtures' README).

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = join(REPO, 'test/fixtures/ssc-e2e');
const fixture = (name: string) => join(FIXTURES, name);
const SS = SECRET_SYNC_RESOURCE;

/** Upstream's git blob ids (README.md): the fixtures are upstream's bytes. */
const UPSTREAM_BLOBS: Record<string, string> = {
  'e2e-providerspc.yaml': 'c9c4f4b3fbeb2212ffbd876df9703994f8cdb259',
  'e2e-secret-sync.yaml': '992de716407f5cbde5e34c6d9fcb971df73baaa1',
  'api_credential_secretsync.yaml': '97c3d1b2484915450f4365dd95201c257377e581',
  'invalid_annotation_key_secretsync.yaml': 'ed6967be1f85147d2af737d44f3c36f7af4269ff',
  'invalid_label_key_secretsync.yaml': '1a37c4216e1acee44238d5cf5c9673ee22c3ed96',
  'invalid_label_value_secretsync.yaml': 'abb23b29bd4180f0fc15907a4fec2011e8ec64ae',
  'service_account_token_secretsync.yaml': '5739a3cbfbe5a84ec468a6426b32f5b44a848a6d',
};

describe("sync controller: SSC's own e2e manifests, unchanged (kubectl, upstream's fake provider as e2e-provider)", function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: SyncControllerStack;
  let manager: ControllerManager | undefined;
  const namespaces: string[] = [];

  const newNamespace = async () => {
    const ns = await createNamespace(cluster, 'ssc-e2e');
    namespaces.push(ns);
    return ns;
  };
  const apply = (ns: string, file: string) => kubectlOk(cluster, ['apply', '-n', ns, '-f', fixture(file)]);
  const readSecret = (ns: string, name: string) => cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
  const noSecret = async (ns: string, name: string) =>
    readSecret(ns, name).then(
      () => expect.fail(`no Secret ${ns}/${name} expected`),
      (err: unknown) => expect(statusOf(err)).to.equal(404),
    );
  /** verify_secretsync_status of upstream's helpers.bash: the first condition of `type` that is not Unknown. */
  const settledCondition = async (ns: string, name: string, type: string) =>
    (
      await until(`${type} of ${ns}/${name} settled`, async () => {
        const ss = (await cluster.admin.custom.getNamespacedCustomObject({ ...SS, namespace: ns, name })) as {
          status?: { conditions?: SecretSyncCondition[] };
        };
        const c = ss.status?.conditions?.find((x) => x.type === type);
        return c && c.status !== 'Unknown' ? { type, status: c.status, reason: c.reason, message: c.message } : false;
      })
    ).value;

  before(async () => {
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    stack = await startSyncControllerWith(
      cluster,
      [upstreamFakeProvider('e2e-provider', { foo: 'secret' })],
      ['--rotation-poll-interval=0'],
    );
  });

  after(async () => {
    await manager?.stop();
    await stack?.stop();
    for (const ns of namespaces) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("the fixtures are upstream's bytes (git blob ids of the README)", async () => {
    for (const [file, blob] of Object.entries(UPSTREAM_BLOBS)) {
      const bytes = await readFile(fixture(file));
      const id = createHash('sha1')
        .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
        .digest('hex');
      expect(id, file).to.equal(blob);
    }
  });

  it('secretproviderclasses and secretsync crds are established (kubectl wait --for condition=established)', async () => {
    for (const crd of ['secretproviderclasses.secrets-store.csi.x-k8s.io', 'secretsyncs.secret-sync.x-k8s.io'])
      await kubectlOk(cluster, ['wait', '--for', 'condition=established', '--timeout=60s', `crd/${crd}`]);
  });

  it('[v1alpha1] validate secret creation and deletion with SecretProviderClass and SecretSync', async () => {
    manager = await startControllerManager(cluster, ['garbage-collector-controller']);
    const ns = await newNamespace();
    await untilGarbageCollectorWorks(cluster, ns, manager);
    await apply(ns, 'e2e-providerspc.yaml');
    await apply(ns, 'e2e-secret-sync.yaml');
    const { value: secret } = await until('Secret sse2esecret', () =>
      readSecret(ns, 'sse2esecret').catch(() => undefined),
    );
    // bats: the Secret's YAML holds 'apiVersion: secret-sync.x-k8s.io/v1alpha1' (its owner reference),
    // data.bar is "secret", and it has exactly one owner.
    expect(secret.metadata?.ownerReferences?.map((o) => o.apiVersion)).to.deep.equal(['secret-sync.x-k8s.io/v1alpha1']);
    expect(Buffer.from(secret.data?.['bar'] ?? '', 'base64').toString()).to.equal('secret');
    expect(await settledCondition(ns, 'sse2esecret', 'SecretCreated')).to.deep.equal({
      type: 'SecretCreated',
      status: 'True',
      reason: 'CreateSuccessful',
      message: 'Secret created successfully.',
    });
    await kubectlOk(cluster, ['delete', 'secretsync', 'sse2esecret', '-n', ns]);
    await until('Secret sse2esecret deleted by the garbage collector', () =>
      readSecret(ns, 'sse2esecret').then(
        () => false,
        (err: unknown) => statusOf(err) === 404,
      ),
    );
  });

  it('SecretProviderClass and SecretSync are deployed in different namespaces: the class is not read from the other namespace', async () => {
    const spcNamespace = await newNamespace();
    const ssNamespace = await newNamespace();
    await apply(spcNamespace, 'e2e-providerspc.yaml');
    await apply(ssNamespace, 'e2e-secret-sync.yaml');
    expect(await settledCondition(ssNamespace, 'sse2esecret', 'SecretCreated')).to.deep.equal({
      type: 'SecretCreated',
      status: 'False',
      reason: 'SecretProviderClassMisconfigured',
      message:
        'failed to get SecretProviderClass "e2e-providerspc": SecretProviderClass.secrets-store.csi.x-k8s.io "e2e-providerspc" not found',
    });
    await noSecret(ssNamespace, 'sse2esecret');
    const { value: event } = await until('SecretSyncFailed event', async () =>
      (
        await cluster.admin.core.listNamespacedEvent({
          namespace: ssNamespace,
          fieldSelector: 'involvedObject.kind=SecretSync,involvedObject.name=sse2esecret',
        })
      ).items.find((e) => e.reason === 'SecretSyncFailed'),
    );
    expect(`${event.type} ${event.message}`).to.equal(
      'Warning SecretProviderClassMisconfigured: failed to get SecretProviderClass "e2e-providerspc": SecretProviderClass.secrets-store.csi.x-k8s.io "e2e-providerspc" not found',
    );
    // The audit log: the class was asked for in the SecretSync's namespace only (not in the
    // watch cache: one GET, 404); never in the namespace where it exists.
    const classCalls = (await auditedCalls(cluster, SYNC_CONTROLLER_USER)).filter(
      (c) => c.resource === 'secretproviderclasses' && c.namespace !== undefined,
    );
    expect(classCalls.filter((c) => c.namespace === spcNamespace)).to.deep.equal([]);
    expect(
      classCalls.filter((c) => c.namespace === ssNamespace).map((c) => `${c.verb} ${c.name} ${c.code}`),
    ).to.include('get e2e-providerspc 404');
    await kubectlOk(cluster, ['delete', '-n', ssNamespace, '-f', fixture('e2e-secret-sync.yaml')]);
  });

  describe('the cases of upstream\'s "default" namespace (here one of the test\'s own)', () => {
    let ns: string;
    before(async () => {
      ns = await newNamespace();
      await apply(ns, 'e2e-providerspc.yaml');
    });

    // The API server's message for an invalid key, as SSC's bats cases expect it.
    const NAME_PART_RULE =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    for (const c of [
      {
        what: 'annotations',
        file: 'invalid_annotation_key_secretsync.yaml',
        secret: 'sse2einvalidannotationssecret',
        field: 'metadata.annotations',
        key: 'my.annotation/with_invalid_characters!',
      },
      {
        what: 'labels',
        file: 'invalid_label_key_secretsync.yaml',
        secret: 'sse2einvalidlabelsecret',
        field: 'metadata.labels',
        key: 'invalid/key_with_invalid_characters!',
      },
    ])
      it(`Cannot create a secret with invalid ${c.what}: the API server refuses the Secret, ControllerPatchError`, async () => {
        await apply(ns, c.file);
        expect(await settledCondition(ns, c.secret, 'SecretCreated')).to.deep.equal({
          type: 'SecretCreated',
          status: 'False',
          reason: 'ControllerPatchError',
          message: `failed to patch secret "${c.secret}": Secret "${c.secret}" is invalid: ${c.field}: Invalid value: "${c.key}": ${NAME_PART_RULE}`,
        });
        await noSecret(ns, c.secret);
      });

    it("API validations: the CRD's CEL rule refuses a label value over 63 characters", async () => {
      // bats applies it in the namespace where the invalid-key SecretSync of the same name
      // exists; a refused apply leaves that one as it was.
      const other = await newNamespace();
      const run = await kubectl(cluster, ['apply', '-n', other, '-f', fixture('invalid_label_value_secretsync.yaml')]);
      expect(run.code, `kubectl apply: ${run.stdout}${run.stderr}`).to.not.equal(0);
      expect(run.stderr).to.include(
        'Label keys must not exceed 317 characters (254 for prefix+separator, 63 for name), label values must not exceed 63 characters.',
      );
      await noSecret(other, 'sse2einvalidlabelsecret');
    });

    it("Cannot create secret with type not in allowed list: the admission policy refuses it, ControllerPatchError in SSC's words", async () => {
      await apply(ns, 'api_credential_secretsync.yaml');
      expect(await settledCondition(ns, 'my-custom-api-secret', 'SecretCreated')).to.deep.equal({
        type: 'SecretCreated',
        status: 'False',
        reason: 'ControllerPatchError',
        // bats' expected message, with the test's namespace for "default".
        message: `failed to patch secret "my-custom-api-secret": secrets "my-custom-api-secret" is forbidden: ValidatingAdmissionPolicy 'secrets-store-sync-controller-create-update-policy' with binding 'secrets-store-sync-controller-create-update-policy-binding' denied request: secrets-store-sync-controller has failed to CREATE secret with example.com/api-credentials type in the ${ns} namespace. The controller can only create or update secrets in the allowed types list with a single secretsync owner.`,
      });
      await noSecret(ns, 'my-custom-api-secret');
    });

    it('Cannot create secret with disallowed type (service-account-token): refused by the controller itself, ControllerPatchError', async () => {
      // SSC leaves this to its ValidatingAdmissionPolicy (bats asserts the policy's denial in
      // the message); our controller refuses before any request, so the message is its own.
      await apply(ns, 'service_account_token_secretsync.yaml');
      expect(await settledCondition(ns, 'sse2eserviceaccountsecret', 'SecretCreated')).to.deep.equal({
        type: 'SecretCreated',
        status: 'False',
        reason: 'ControllerPatchError',
        message:
          'failed to patch secret "sse2eserviceaccountsecret": Secrets of type kubernetes.io/service-account-token are never written',
      });
      await noSecret(ns, 'sse2eserviceaccountsecret');
    });
  });
});
