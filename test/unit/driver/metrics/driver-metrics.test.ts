import { expect } from 'chai';
import { Registry } from 'prom-client';
import { DriverMetrics } from '../../../../driver/metrics/driver-metrics.js';
import { recordDriverMetrics } from '../../../support/exposition.js';

/** Upstream v1.6.1's driver metrics and their labels (pkg/secrets-store/stats_reporter.go). */
const UPSTREAM_LABELS: Readonly<Record<string, readonly string[]>> = {
  node_publish_total: ['provider', 'os_type'],
  node_unpublish_total: ['os_type'],
  node_publish_error_total: ['provider', 'error_type', 'os_type'],
  node_unpublish_error_total: ['os_type'],
  sync_k8s_secret_total: ['provider', 'os_type'],
  k8s_secret_duration_sec: ['os_type'],
  rotation_reconcile_total: ['provider', 'os_type', 'rotated'],
  rotation_reconcile_error_total: ['provider', 'error_type', 'os_type', 'rotated'],
  rotation_reconcile_duration_sec: ['os_type'],
};

/** Labels we add to upstream's, each explained in docs/metrics.md. */
const OUR_ADDITIONS: Readonly<Record<string, readonly string[]>> = {
  node_unpublish_error_total: ['error_type'],
};

/** The label names of `name`'s samples (a histogram's `_count`) in exposition text. */
function labelNames(text: string, name: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name}_count{`));
  expect(line, `a sample of ${name}`).to.be.a('string');
  return [...(line as string).matchAll(/([a-z_]+)="/g)].map((m) => m[1] as string).sort();
}

describe('DriverMetrics', () => {
  it("has upstream v1.6.1's metrics with all of their labels, plus only the documented additions", async () => {
    const registry = new Registry();
    recordDriverMetrics(registry);
    const text = await registry.metrics();
    for (const [name, upstream] of Object.entries(UPSTREAM_LABELS)) {
      expect(labelNames(text, name), name).to.deep.equal([...upstream, ...(OUR_ADDITIONS[name] ?? [])].sort());
    }
  });

  it('records rotated on a failed rotation refresh', async () => {
    const m = new DriverMetrics();
    m.reconcileFailed('file', 'ProviderTimeout', false);
    m.reconcileFailed('file', 'KubernetesAPIError', true);
    const text = await m.registry.metrics();
    expect(text).to.match(
      /^rotation_reconcile_error_total\{provider="file",os_type="linux",error_type="ProviderTimeout",rotated="false"\} 1$/m,
    );
    expect(text).to.match(
      /^rotation_reconcile_error_total\{provider="file",os_type="linux",error_type="KubernetesAPIError",rotated="true"\} 1$/m,
    );
  });
});
