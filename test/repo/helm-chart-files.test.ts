import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The chart cannot read deploy/ (Helm reads only files inside the chart), so it carries
// its own copy of the CRDs; scripts/gen-crds.mjs writes both. A CRD changed in one place
// only would make a Helm install and `kubectl apply -k deploy/` serve different schemas.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const DEPLOY_CRDS = join(REPO, 'deploy/crds');
const CHART_CRDS = join(REPO, 'charts/secrets-store-csi/files/crds');

describe('Helm chart files', () => {
  it("the chart's CRDs are byte-for-byte deploy/crds (regenerate both with node scripts/gen-crds.mjs)", () => {
    const names = readdirSync(DEPLOY_CRDS).sort();
    expect(readdirSync(CHART_CRDS).sort()).to.deep.equal(names);
    for (const name of names) {
      expect(readFileSync(join(CHART_CRDS, name), 'utf8'), name).to.equal(
        readFileSync(join(DEPLOY_CRDS, name), 'utf8'),
      );
    }
  });

  it("the chart's copies of deploy/sync-controller's CRD, RBAC and admission policies are byte-for-byte the same (node scripts/gen-crds.mjs copies them)", () => {
    for (const name of ['secretsyncs-crd.yaml', 'rbac.yaml', 'admission-policies.yaml'])
      expect(readFileSync(join(REPO, 'charts/secrets-store-csi/files/sync-controller', name), 'utf8'), name).to.equal(
        readFileSync(join(REPO, 'deploy/sync-controller', name), 'utf8'),
      );
  });

  it("the chart's version and appVersion are package.json's version, the images' placeholder tag", () => {
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    const chart = readFileSync(join(REPO, 'charts/secrets-store-csi/Chart.yaml'), 'utf8');
    expect(/^version: (\S+)$/m.exec(chart)?.[1]).to.equal(version);
    expect(/^appVersion: "?([^"\s]+)"?$/m.exec(chart)?.[1]).to.equal(version);
    const values = readFileSync(join(REPO, 'charts/secrets-store-csi/values.yaml'), 'utf8');
    expect(values.match(/^\s+tag: (\S+)$/gm)?.map((l) => l.trim())).to.include(`tag: ${version}`);
  });
});
