import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WatchObserver } from '../k8s/client/kube-api.js';

/** A provider name as a label value: names that break the provider name rule become "invalid". */
function providerLabel(provider: string): string {
  return /^[a-zA-Z0-9_-]{0,30}$/.test(provider) ? provider : 'invalid';
}

/** Event types a watch sends; anything else is counted as "other". */
const WATCH_EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/**
 * The labels of a watched collection path: its resource (the last segment) and scope,
 * `namespace` for /…/namespaces/<ns>/<resource>, else `cluster` (a field or label selector
 * may still narrow a cluster-scoped watch, e.g. pods by spec.nodeName). Never the
 * namespace's name: label values stay few.
 */
export function watchLabels(path: string): { resource: string; scope: 'cluster' | 'namespace' } {
  const parts = (path.split('?')[0] ?? '').split('/').filter(Boolean);
  const resource = parts[parts.length - 1] ?? '';
  return { resource, scope: parts[parts.length - 3] === 'namespaces' ? 'namespace' : 'cluster' };
}

/**
 * What a node's driver holds open and receives from the API server (issue 30: cost at
 * scale), registered on `registry`: kube_watches_open, kube_watch_events_total,
 * kube_watch_bytes_total, fed by the API client's watch observer.
 */
function watchMetrics(registry: Registry): WatchObserver {
  const open = new Gauge({
    name: 'kube_watches_open',
    help: 'Kubernetes API watches open now, by resource and scope (cluster or namespace)',
    labelNames: ['resource', 'scope'],
    registers: [registry],
  });
  const events = new Counter({
    name: 'kube_watch_events_total',
    help: 'Kubernetes API watch events received, by resource, scope and event type',
    labelNames: ['resource', 'scope', 'type'],
    registers: [registry],
  });
  const bytes = new Counter({
    name: 'kube_watch_bytes_total',
    help: 'Bytes of Kubernetes API watch events received, by resource and scope',
    labelNames: ['resource', 'scope'],
    registers: [registry],
  });
  return {
    opened: (path) => open.inc(watchLabels(path)),
    closed: (path) => open.dec(watchLabels(path)),
    received: (path, type, n) => {
      const labels = watchLabels(path);
      events.inc({ ...labels, type: WATCH_EVENT_TYPES.has(type) ? type : 'other' });
      bytes.inc(labels, n);
    },
  };
}

/** The OS label upstream reports with every driver metric. */
const OS_TYPE = process.platform === 'win32' ? 'windows' : 'linux';

/**
 * The driver's Prometheus metrics, with upstream's names and labels (docs/metrics.md) so
 * existing dashboards and alerts keep working. One instance per driver process.
 */
export class DriverMetrics {
  private readonly publishTotal: Counter<'provider' | 'os_type'>;
  private readonly publishErrors: Counter<'provider' | 'error_type' | 'os_type'>;
  private readonly unpublishTotal: Counter<'os_type'>;
  private readonly unpublishErrors: Counter<'error_type' | 'os_type'>;
  private readonly syncTotal: Counter<'provider' | 'os_type'>;
  private readonly syncDuration: Histogram<'os_type'>;
  private readonly rotationTotal: Counter<'provider' | 'os_type' | 'rotated'>;
  private readonly rotationErrors: Counter<'provider' | 'os_type' | 'error_type' | 'rotated'>;
  private readonly rotationDuration: Histogram<'os_type'>;
  private readonly apiRequests: Counter<'method' | 'code'>;
  /** What the API client tells of its watches (Kubernetes mode): kube_watches_open, kube_watch_events_total, kube_watch_bytes_total. */
  readonly watchObserver: WatchObserver;

  /** Registers on `registry`: the process's (createProcessRegistry); a fresh one keeps them private. */
  constructor(readonly registry: Registry = new Registry()) {
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
      new Counter({ name, help, labelNames, registers: [registry] });
    const histogram = (name: string, help: string, buckets: number[]): Histogram<'os_type'> =>
      new Histogram({ name, help, labelNames: ['os_type'], buckets, registers: [registry] });
    // Registered in the order /metrics lists them.
    this.publishTotal = counter('node_publish_total', 'Successful NodePublishVolume calls', ['provider', 'os_type']);
    this.publishErrors = counter('node_publish_error_total', 'Failed NodePublishVolume calls', [
      'provider',
      'error_type',
      'os_type',
    ]);
    this.unpublishTotal = counter('node_unpublish_total', 'Successful NodeUnpublishVolume calls', ['os_type']);
    this.unpublishErrors = counter('node_unpublish_error_total', 'Failed NodeUnpublishVolume calls', [
      'error_type',
      'os_type',
    ]);
    this.syncTotal = counter('sync_k8s_secret_total', 'Kubernetes Secrets synced from mounted files', [
      'provider',
      'os_type',
    ]);
    this.rotationTotal = counter('rotation_reconcile_total', 'Volumes refreshed by the rotation reconciler', [
      'provider',
      'os_type',
      'rotated',
    ]);
    this.rotationErrors = counter('rotation_reconcile_error_total', 'Failed rotation refreshes', [
      'provider',
      'os_type',
      'error_type',
      'rotated',
    ]);
    this.rotationDuration = histogram(
      'rotation_reconcile_duration_sec',
      'Time to refresh one volume',
      [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
    );
    // client-go's name, so API load dashboards cover this driver too (Kubernetes mode only).
    this.apiRequests = counter(
      'rest_client_requests_total',
      'Kubernetes API requests by HTTP method and status code ("<error>": no answer)',
      ['method', 'code'],
    );
    this.syncDuration = histogram(
      'k8s_secret_duration_sec',
      'Time to sync one Kubernetes Secret',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    );
    this.watchObserver = watchMetrics(registry);
  }

  /** Records one volume refreshed by rotation (upstream's rotation_reconcile_total). */
  reconciled(provider: string, rotated: boolean, seconds: number): void {
    this.rotationTotal.inc({ provider: providerLabel(provider), os_type: OS_TYPE, rotated: String(rotated) });
    this.rotationDuration.observe({ os_type: OS_TYPE }, seconds);
  }

  /** Records one failed rotation refresh; `rotated`: new content was written before it failed. */
  reconcileFailed(provider: string, errorType: string, rotated: boolean): void {
    this.rotationErrors.inc({
      provider: providerLabel(provider),
      os_type: OS_TYPE,
      error_type: errorType,
      rotated: String(rotated),
    });
  }

  /** Records one synced Secret and how long it took. */
  secretSynced(provider: string, seconds: number): void {
    this.syncTotal.inc({ provider: providerLabel(provider), os_type: OS_TYPE });
    this.syncDuration.observe({ os_type: OS_TYPE }, seconds);
  }

  /** Records a successful publish. */
  publishSucceeded(provider: string): void {
    this.publishTotal.inc({ provider: providerLabel(provider), os_type: OS_TYPE });
  }

  /** Records a failed publish; `provider` is "" when the class could not be resolved. */
  publishFailed(provider: string, errorType: string): void {
    this.publishErrors.inc({ provider: providerLabel(provider), error_type: errorType, os_type: OS_TYPE });
  }

  /** Records one Kubernetes API request (a watch counts when it is opened). */
  apiRequest(method: string, code: string): void {
    this.apiRequests.inc({ method, code });
  }

  /** Records a successful unpublish. */
  unpublishSucceeded(): void {
    this.unpublishTotal.inc({ os_type: OS_TYPE });
  }

  /** Records a failed unpublish. */
  unpublishFailed(errorType: string): void {
    this.unpublishErrors.inc({ error_type: errorType, os_type: OS_TYPE });
  }
}
