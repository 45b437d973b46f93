import { expect } from 'chai';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged, untilLogged } from '../../bin/child-process.js';
import { E2E_IMAGE } from '../support/e2e-image.js';
import { skipUnlessE2eCapable, startE2eNode, type E2eNode } from '../support/e2e-node.js';
import { containerLog, csiPod, READ_LOOP, runPod, volumeTarget, writeProviderFile } from '../support/e2e-pods.js';
import { createNamespace } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { podEvents } from '../support/rbac-scenario.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { until } from '../support/until.js';

// Through a real kubelet and containerd, on one node whose
// driver runs the rotation reconciler every ROTATION_S and whose CSIDriver asks kubelet
// for tokens of E2E_AUDIENCE (fsGroupPolicy File as deploy/ ships it).

const ROTATION_S = 2;
const E2E_AUDIENCE = 'e2e-audience';

/** The payload of a JWT (no signature check: the test asks what kubelet minted, not whether it is valid). */
function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe("end to end: rotation, kubelet's tokens and fsGroup through kubelet and containerd", function () {
  this.timeout(300_000);
  let node: E2eNode;
  let scripted: ScriptedProvider | undefined;

  before(async function () {
    await skipUnlessE2eCapable(this);
    node = await startE2eNode({
      driverArgs: ['--enable-secret-rotation', `--rotation-poll-interval=${ROTATION_S}s`],
      csiDriverSpec: { tokenRequests: [{ audience: E2E_AUDIENCE }] },
    });
  });
  after(async () => {
    await scripted?.stop();
    await node?.stop();
  });

  it("rotates the file the running container sees within the interval; versions.json and the pod's event follow; an unchanged round changes nothing", async () => {
    const { cluster } = node;
    const ns = await createNamespace(cluster, 'e2e-rot');
    await writeProviderFile(node, 'rot/password', 'first-value');
    await createSecretProviderClass(cluster, ns, 'rot', {
      provider: 'file',
      parameters: { objects: '- objectName: password\n  sourcePath: rot/password\n' },
    });
    const uid = await runPod(node, ns, csiPod(node, 'rotating', 'rot', READ_LOOP, E2E_IMAGE));
    await until(
      'the container to print the first value',
      async () => (await containerLog(node, ns, 'rotating', uid, 'app')).includes('file=first-value'),
      30_000,
    );
    const versionsPath = join(volumeTarget(node, uid, 'secrets'), '.metadata', 'versions.json');
    const before = await readFile(versionsPath, 'utf8');

    const changed = Date.now();
    await writeProviderFile(node, 'rot/password', 'second-value');
    const seen = await until(
      'the running container to print the new value',
      async () => (await containerLog(node, ns, 'rotating', uid, 'app')).includes('file=second-value'),
      30_000,
    );
    process.stdout.write(
      `      the container saw the new value ${Date.now() - changed} ms after the source changed (interval ${ROTATION_S} s)\n`,
    );
    // One interval with jitter, the round's fetch and the container's 0.5 s loop.
    expect(seen.ms, 'within the rotation interval').to.be.below((2 * ROTATION_S + 2) * 1000);
    const after = await readFile(versionsPath, 'utf8');
    expect(after, 'versions.json follows the new version').to.not.equal(before);
    // until() stops at the first truthy value, and [] is truthy: wait for a non-empty list.
    const events = await until(
      'the MountRotationComplete event',
      async () => {
        const found = (await podEvents(cluster, ns, 'rotating')).filter((e) =>
          e.startsWith('Normal MountRotationComplete'),
        );
        return found.length > 0 ? found : undefined;
      },
      30_000,
    );

    // Two more rounds with the source unchanged: no new event, versions.json and the file untouched.
    const filePath = join(volumeTarget(node, uid, 'secrets'), 'password');
    const fileBefore = await stat(filePath);
    const versionsStat = await stat(versionsPath);
    const rounds = countLogged(node.stack.driver, /"message":"rotation round done"/);
    await untilLogged(node.stack.driver, /"message":"rotation round done"/, rounds + 2);
    expect(
      (await podEvents(cluster, ns, 'rotating')).filter((e) => e.startsWith('Normal MountRotationComplete')),
    ).to.have.length(events.value.length);
    expect(await readFile(versionsPath, 'utf8')).to.equal(after);
    expect((await stat(versionsPath)).mtimeMs, 'versions.json not rewritten').to.equal(versionsStat.mtimeMs);
    expect((await stat(filePath)).mtimeMs, 'the secret file not rewritten').to.equal(fileBefore.mtimeMs);
    const lines = (await containerLog(node, ns, 'rotating', uid, 'app'))
      .split('\n')
      .filter((l) => l.startsWith('file='));
    expect(lines.at(-1)).to.equal('file=second-value');
  });

  it("passes the token kubelet minted for the CSIDriver's audience to the provider", async () => {
    const { cluster } = node;
    scripted = await startScriptedProvider(node.stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'password', contents: 'from-scripted' }]),
    );
    const ns = await createNamespace(cluster, 'e2e-tok');
    await createSecretProviderClass(cluster, ns, 'tok', { provider: 'scripted', parameters: {} });
    const uid = await runPod(
      node,
      ns,
      csiPod(node, 'token-pod', 'tok', 'cat /mnt/secrets-store/password; echo; exec sleep 2147483647', E2E_IMAGE),
    );
    // The first Mount is kubelet's NodePublishVolume (later ones are rotation rounds, with tokens the driver minted).
    const first = scripted.requests[0];
    expect(first, 'a Mount request reached the provider').to.not.equal(undefined);
    const attributes = JSON.parse(first?.attributes ?? '{}') as Record<string, string>;
    const tokens = JSON.parse(attributes['csi.storage.k8s.io/serviceAccount.tokens'] ?? '{}') as Record<
      string,
      { token: string }
    >;
    expect(Object.keys(tokens)).to.deep.equal([E2E_AUDIENCE]);
    const claims = jwtClaims(tokens[E2E_AUDIENCE]?.token ?? '');
    expect(claims['aud']).to.deep.equal([E2E_AUDIENCE]);
    expect(claims['sub']).to.equal(`system:serviceaccount:${ns}:default`);
    const bound = claims['kubernetes.io'] as { pod?: { name?: string; uid?: string } } | undefined;
    expect(bound?.pod, 'the token is bound to the pod').to.deep.equal({ name: 'token-pod', uid });
    await until(
      'the container to print the scripted secret',
      async () => (await containerLog(node, ns, 'token-pod', uid, 'app')).includes('from-scripted'),
      30_000,
    );
  });

  it('lets a non-root pod in the fsGroup read a 0440 file; a pod without the group cannot', async () => {
    const { cluster } = node;
    const ns = await createNamespace(cluster, 'e2e-fsg');
    await writeProviderFile(node, 'fsg/password', 'group-secret');
    await createSecretProviderClass(cluster, ns, 'fsg', {
      provider: 'file',
      parameters: { objects: '- objectName: password\n  sourcePath: fsg/password\n  mode: "0440"\n' },
    });
    const script =
      'if cat /mnt/secrets-store/password; then echo; echo read=ok; else echo read=denied; fi; ls -lnL /mnt/secrets-store/password; echo "id=$(id -u):$(id -g):$(id -G)"; exec sleep 2147483647';
    const member = await runPod(
      node,
      ns,
      csiPod(node, 'member', 'fsg', script, E2E_IMAGE, {
        securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000 },
      }),
    );
    const outsider = await runPod(
      node,
      ns,
      csiPod(node, 'outsider', 'fsg', script, E2E_IMAGE, { securityContext: { runAsUser: 1000, runAsGroup: 3000 } }),
    );
    const memberLog = (
      await until(
        'the member pod to report',
        async () => {
          const l = await containerLog(node, ns, 'member', member, 'app');
          return /^id=/m.test(l) ? l : undefined;
        },
        30_000,
      )
    ).value;
    const outsiderLog = (
      await until(
        'the outsider pod to report',
        async () => {
          const l = await containerLog(node, ns, 'outsider', outsider, 'app');
          return /^id=/m.test(l) ? l : undefined;
        },
        30_000,
      )
    ).value;
    expect(memberLog).to.include('group-secret');
    expect(memberLog).to.include('read=ok');
    expect(memberLog).to.match(/-r--r-----\s+\d+\s+0\s+2000\s/);
    expect(outsiderLog).to.include('read=denied');
    expect(outsiderLog).to.not.include('group-secret');
    expect(outsiderLog).to.match(/-r--r-----\s+\d+\s+0\s+0\s/);
  });
});
