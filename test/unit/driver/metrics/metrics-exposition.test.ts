import { expect } from 'chai';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DriverMetrics, watchLabels } from '../../../../driver/metrics/driver-metrics.js';
import { createProcessRegistry } from '../../../../lib/process-registry.js';
import { recordDriverMetrics, recordProviderMetrics, shownMetrics } from '../../../support/exposition.js';

// What an operator's dashboards and alerts read on /metrics: each metric's name, type,
// HELP, label names and buckets, frozen here; a change shows up as a failing line.

/** One metric as /metrics shows it. */
interface Shown {
  readonly type: string;
  readonly help: string;
  readonly labels: readonly string[];
  readonly buckets?: readonly string[];
}

const counter = (labels: readonly string[], help: string): Shown => ({ type: 'counter', help, labels });
const histogram = (labels: readonly string[], help: string, buckets: readonly string[]): Shown => ({
  type: 'histogram',
  help,
  labels,
  buckets: [...buckets, '+Inf'],
});

const DRIVER: Readonly<Record<string, Shown>> = {
  node_publish_total: counter(['provider', 'os_type'], 'Successful NodePublishVolume calls'),
  node_publish_error_total: counter(['provider', 'error_type', 'os_type'], 'Failed NodePublishVolume calls'),
  node_unpublish_total: counter(['os_type'], 'Successful NodeUnpublishVolume calls'),
  node_unpublish_error_total: counter(['error_type', 'os_type'], 'Failed NodeUnpublishVolume calls'),
  sync_k8s_secret_total: counter(['provider', 'os_type'], 'Kubernetes Secrets synced from mounted files'),
  rotation_reconcile_total: counter(['provider', 'os_type', 'rotated'], 'Volumes refreshed by the rotation reconciler'),
  rotation_reconcile_error_total: counter(
    ['provider', 'os_type', 'error_type', 'rotated'],
    'Failed rotation refreshes',
  ),
  rotation_reconcile_duration_sec: histogram(['os_type'], 'Time to refresh one volume', [
    '0.005',
    '0.01',
    '0.05',
    '0.1',
    '0.5',
    '1',
    '5',
    '10',
  ]),
  rest_client_requests_total: counter(
    ['method', 'code'],
    'Kubernetes API requests by HTTP method and status code ("<error>": no answer)',
  ),
  k8s_secret_duration_sec: histogram(['os_type'], 'Time to sync one Kubernetes Secret', [
    '0.01',
    '0.05',
    '0.1',
    '0.25',
    '0.5',
    '1',
    '2.5',
    '5',
  ]),
  kube_watches_open: {
    type: 'gauge',
    help: 'Kubernetes API watches open now, by resource and scope (cluster or namespace)',
    labels: ['resource', 'scope'],
  },
  kube_watch_events_total: counter(
    ['resource', 'scope', 'type'],
    'Kubernetes API watch events received, by resource, scope and event type',
  ),
  kube_watch_bytes_total: counter(
    ['resource', 'scope'],
    'Bytes of Kubernetes API watch events received, by resource and scope',
  ),
};

const PROVIDERS: Readonly<Record<string, Shown>> = {
  provider_mount_total: counter(['provider', 'result', 'error_type'], 'Mount calls served, by result'),
  provider_mount_duration_seconds: histogram(['provider'], 'Time to serve a Mount call', [
    '0.001',
    '0.005',
    '0.01',
    '0.05',
    '0.1',
    '0.5',
    '1',
    '5',
    '10',
  ]),
  vault_read_cache_total: counter(
    ['result'],
    'Vault GET reads by how they were answered: hit (from the window), ' +
      'miss (sent to Vault), coalesced (joined a read in flight)',
  ),
  vault_lease_total: counter(
    ['outcome'],
    'Dynamic secrets (responses with a lease) served, by outcome: ' +
      'reused (held lease, nothing sent), renewed, fetched (issued anew)',
  ),
  vault_lease_dropped_total: counter(['reason'], 'Leases the provider stopped holding, by reason'),
  vault_login_total: counter(['result'], 'Vault logins made, by result'),
  azure_keyvault_requests_total: counter(
    ['operation', 'status'],
    'HTTP requests sent to Key Vault (each page of a ' +
      'version listing and each auth challenge counts), by operation and HTTP status ("error": no response)',
  ),
  azure_read_cache_total: counter(
    ['result'],
    'Key Vault reads (gets and version listings) by how they were answered: ' +
      'hit (from the --read-cache-window), miss (sent), coalesced (joined the same read in flight)',
  ),
  pki_mount_decisions_total: counter(
    ['decision'],
    'Mounts by what they decided: keep (no files, the mounted certificate stays) or why a certificate was issued',
  ),
};

/** A driver's metrics, each recorded once, on a registry of their own. */
async function driverText(): Promise<string> {
  const registry = new Registry();
  recordDriverMetrics(registry);
  return registry.metrics();
}

/** The framework's and every provider's metrics, each recorded once, on one registry. */
async function providersText(): Promise<string> {
  const registry = new Registry();
  recordProviderMetrics(registry);
  return registry.metrics();
}

describe("/metrics: the driver's and the providers' metrics as operators read them", () => {
  const sides = [
    ['driver', DRIVER, driverText],
    ['providers', PROVIDERS, providersText],
  ] as const;
  for (const [side, pinned, text] of sides) {
    it(`${side}: names, types, HELP, labels and buckets`, async () => {
      const shown = shownMetrics(await text());
      expect([...shown.keys()].sort(), 'metric names').to.deep.equal(Object.keys(pinned).sort());
      for (const [name, want] of Object.entries(pinned)) {
        const got = shown.get(name);
        const buckets = got?.buckets.length ? got.buckets : undefined;
        expect({ ...got, buckets }, name).to.deep.equal({ ...want, buckets: want.buckets });
      }
    });
  }

  it("driver: sample lines in the labels' order, upstream's os_type", async () => {
    const text = await driverText();
    expect(text).to.match(/^node_publish_total\{provider="file",os_type="linux"\} 1$/m);
    expect(text).to.match(/^node_publish_error_total\{provider="",error_type="InvalidRequest",os_type="linux"\} 1$/m);
    expect(text).to.match(/^rest_client_requests_total\{method="GET",code="<error>"\} 1$/m);
    expect(text).to.match(/^k8s_secret_duration_sec_bucket\{le="0.05",os_type="linux"\} 1$/m);
    expect(text).to.match(/^k8s_secret_duration_sec_sum\{os_type="linux"\} 0.02$/m);
  });

  it('driver: watches by resource and scope (never a namespace name), events by type, bytes; a closed watch is no longer open', async () => {
    expect(watchLabels('/api/v1/pods')).to.deep.equal({ resource: 'pods', scope: 'cluster' });
    expect(watchLabels('/api/v1/namespaces/team-a/secrets')).to.deep.equal({ resource: 'secrets', scope: 'namespace' });
    expect(watchLabels('/apis/secrets-store.csi.x-k8s.io/v1/secretproviderclasses')).to.deep.equal({
      resource: 'secretproviderclasses',
      scope: 'cluster',
    });
    expect(watchLabels('/apis/secrets-store.csi.x-k8s.io/v1/namespaces/ns/secretproviderclasses')).to.deep.equal({
      resource: 'secretproviderclasses',
      scope: 'namespace',
    });
    const registry = new Registry();
    const { watchObserver: w } = new DriverMetrics(registry);
    w.opened('/api/v1/namespaces/a/secrets');
    w.opened('/api/v1/namespaces/b/secrets');
    w.received('/api/v1/namespaces/a/secrets', 'ADDED', 120);
    w.received('/api/v1/namespaces/b/secrets', 'BOOKMARK', 80);
    w.received('/api/v1/namespaces/b/secrets', 'SURPRISE', 5);
    w.closed('/api/v1/namespaces/a/secrets');
    const text = await registry.metrics();
    expect(text).to.match(/^kube_watches_open\{resource="secrets",scope="namespace"\} 1$/m);
    expect(text).to.match(/^kube_watch_events_total\{resource="secrets",scope="namespace",type="ADDED"\} 1$/m);
    expect(text).to.match(/^kube_watch_events_total\{resource="secrets",scope="namespace",type="BOOKMARK"\} 1$/m);
    expect(text).to.match(/^kube_watch_events_total\{resource="secrets",scope="namespace",type="other"\} 1$/m);
    expect(text).to.match(/^kube_watch_bytes_total\{resource="secrets",scope="namespace"\} 205$/m);
    expect(text).not.to.match(/team-a|"a"|"b"/);
  });

  it('the process registry serves the defaults and what is registered on it, on one page', async () => {
    const registry = createProcessRegistry();
    new DriverMetrics(registry).publishSucceeded('file');
    const names = [...shownMetrics(await registry.metrics()).keys()];
    expect(names).to.include.members(['node_publish_total', 'process_cpu_seconds_total', 'nodejs_gc_duration_seconds']);
    expect(registry.contentType).to.equal('text/plain; version=0.0.4; charset=utf-8');
  });
});

describe('/metrics: the text format', () => {
  it('escapes HELP and label values; writes labels in the order given; a label left out is not written', async () => {
    const registry = new Registry();
    const help = 'C:\\dir\nsecond "line"';
    const c = new Counter({ name: 'esc_total', help, labelNames: ['v', 'n'], registers: [registry] });
    c.inc({ v: 'say "hi"\\path\nnext', n: 7 });
    c.inc({ v: 'é ✓ {}=,' });
    expect(await registry.metrics()).to.equal(
      [
        '# HELP esc_total C:\\\\dir\\nsecond "line"',
        '# TYPE esc_total counter',
        'esc_total{v="say \\"hi\\"\\\\path\\nnext",n="7"} 1',
        'esc_total{v="é ✓ {}=,"} 1',
        '',
      ].join('\n'),
    );
  });

  it('a histogram: cumulative buckets with le first, +Inf, _sum and _count', async () => {
    const registry = new Registry();
    const h = new Histogram({
      name: 'h_seconds',
      help: 'H',
      labelNames: ['os_type'],
      buckets: [0.1, 1],
      registers: [registry],
    });
    for (const v of [0.05, 0.5, 3]) h.observe({ os_type: 'linux' }, v);
    expect(await registry.metrics()).to.equal(
      [
        '# HELP h_seconds H',
        '# TYPE h_seconds histogram',
        'h_seconds_bucket{le="0.1",os_type="linux"} 1',
        'h_seconds_bucket{le="1",os_type="linux"} 2',
        'h_seconds_bucket{le="+Inf",os_type="linux"} 3',
        'h_seconds_sum{os_type="linux"} 3.55',
        'h_seconds_count{os_type="linux"} 3',
        '',
      ].join('\n'),
    );
  });

  it('a counter without labels reads 0 at once, a labelled one no sample until used; NaN is "Nan"', async () => {
    const registry = new Registry();
    new Counter({ name: 'a_total', help: 'A', registers: [registry] });
    new Counter({ name: 'b_total', help: 'B', labelNames: ['x'], registers: [registry] });
    new Gauge({ name: 'g', help: 'G', registers: [registry] }).set(NaN);
    expect(await registry.metrics()).to.equal(
      [
        '# HELP a_total A',
        '# TYPE a_total counter',
        'a_total 0',
        '',
        '# HELP b_total B',
        '# TYPE b_total counter',
        '',
        '# HELP g G',
        '# TYPE g gauge',
        'g Nan',
        '',
      ].join('\n'),
    );
  });
});
