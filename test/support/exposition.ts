// For the tests of /metrics: every metric of the driver and the providers recorded once, and
// exposition text read back into what each metric shows.
import type { Registry } from 'prom-client';
import { DriverMetrics } from '../../driver/metrics/driver-metrics.js';
import { AzureMetrics } from '../../providers/azure/azure-metrics.js';
import { ProviderMetrics } from '../../providers/framework/provider-metrics.js';
import { PkiMetrics } from '../../providers/pki/pki-metrics.js';
import { VaultMetrics } from '../../providers/vault/vault-metrics.js';

/** One metric as an exposition text shows it. */
export interface ShownMetric {
  type: string;
  help: string;
  /** The label names of its samples, `le` apart, in first-seen order. */
  labels: string[];
  /** Its histogram bucket bounds (`le` values, `+Inf` last); none for other types. */
  buckets: string[];
}

/** Each metric of an exposition text by name: its HELP, TYPE, label names and buckets. */
export function shownMetrics(text: string): Map<string, ShownMetric> {
  const metrics = new Map<string, ShownMetric>();
  let current: ShownMetric | undefined;
  for (const line of text.split('\n')) {
    const header = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (header) {
      current = metrics.get(header[2] as string) ?? { type: '', help: '', labels: [], buckets: [] };
      metrics.set(header[2] as string, current);
      if (header[1] === 'HELP') current.help = header[3] as string;
      else current.type = header[3] as string;
    } else if (current && line !== '') {
      for (const [, name, value] of line.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        if (name === 'le') {
          if (!current.buckets.includes(value as string)) current.buckets.push(value as string);
        } else if (!current.labels.includes(name as string)) {
          current.labels.push(name as string);
        }
      }
    }
  }
  return metrics;
}

/** Registers the driver's metrics on `registry` and records each once, so that every label shows. */
export function recordDriverMetrics(registry: Registry): void {
  const m = new DriverMetrics(registry);
  m.publishSucceeded('file');
  m.publishFailed('', 'InvalidRequest');
  m.unpublishSucceeded();
  m.unpublishFailed('FailedToUnmount');
  m.secretSynced('file', 0.02);
  m.reconciled('file', true, 0.03);
  m.reconcileFailed('file', 'ProviderTimeout', false);
  m.apiRequest('GET', '<error>');
  m.watchObserver.opened('/api/v1/pods');
  m.watchObserver.received('/api/v1/namespaces/ns/secrets', 'ADDED', 100);
}

/** Registers the framework's and every provider's metrics on `registry`, each recorded once. */
export function recordProviderMetrics(registry: Registry): void {
  new ProviderMetrics('file', registry).mountServed(undefined, 0.004);
  // These zero every label value they have as they are made.
  new VaultMetrics(registry);
  new PkiMetrics(registry);
  new AzureMetrics(registry).request('get_secret', '200');
}
