import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO } from '../support/deploy-manifests.js';
import { findManifest, parseManifests, podContainer } from '../support/helm.js';
import { requirePeer } from '../support/peers.js';

// The configuration docs/secret-sync-controller.md documents for `kubectl apply -k`: an
// overlay of deploy/sync-controller/ that patches the admission policies' ConfigMap, built
// by the real kubectl's kustomize (no cluster).

const OVERLAY_PATCH = `
patches:
  - target: {kind: ConfigMap, name: secrets-store-sync-controller-config}
    patch: |
      - op: replace
        path: /data/tokenRequestAudience
        value: vault,api://my-app
`;

describe('sync controller: deploy/sync-controller/ with a kustomize overlay setting the audiences (real kubectl kustomize)', function () {
  this.timeout(60_000);
  let dir: string | undefined;

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the ConfigMap the policies and the controller read gets the overlay's audiences; the rest is deploy/sync-controller/'s", async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-kustomize-'));
    const base = relative(dir, join(REPO, 'deploy/sync-controller'));
    await writeFile(join(dir, 'kustomization.yaml'), `resources:\n  - ${base}\n${OVERLAY_PATCH}`);
    const kubectl = requirePeer('KUBECTL');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(kubectl, ['kustomize', dir ?? ''], { maxBuffer: 8 << 20 }, (err, stdout, stderr) =>
        err ? reject(new Error(`kubectl kustomize: ${stderr}`)) : resolve(stdout),
      ),
    );
    const objects = parseManifests(out);
    expect(objects).to.have.length(20);
    const config = findManifest(objects, 'ConfigMap', 'secrets-store-sync-controller-config');
    expect(config['data'].tokenRequestAudience).to.equal('vault,api://my-app');
    expect(config['data'].allowedSecretTypes).to.match(/^Opaque,/);
    const env = (podContainer(findManifest(objects, 'Deployment', 'secrets-store-sync-controller'), 'controller')[
      'env'
    ] ?? []) as { name: string; valueFrom?: { configMapKeyRef?: { name: string; key: string } } }[];
    expect(env.find((e) => e.name === 'TOKEN_REQUEST_AUDIENCE')?.valueFrom?.configMapKeyRef).to.deep.equal({
      name: 'secrets-store-sync-controller-config',
      key: 'tokenRequestAudience',
    });
  });
});
