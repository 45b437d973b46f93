import { countBy, trafficOf, type AuditedRequest } from '../test/support/vault-audit.js';

/**
 * The Vault-load benchmark's columns, from the requests OpenBao's audit log recorded
 * (test/support/vault-audit.ts reads the log and sorts out logins and mount lookups).
 */

/** Requests of one measured stretch, by the benchmark's columns. */
export interface VaultLoadTraffic {
  /** Requests to `auth/<mount>/login`. */
  readonly logins: number;
  /** Reads of secrets engine paths (neither `sys/` nor `auth/`): KV reads here. */
  readonly reads: number;
  /** `sys/internal/ui/mounts/<path>`: the KV version probe. */
  readonly mountLookups: number;
  /** Everything else: lease renewals, token lookups, writes. */
  readonly other: number;
  readonly total: number;
  /** Requests OpenBao answered with an error. */
  readonly failed: number;
  /** Requests by `<operation> <namespace/><path>`, for reading the JSON. */
  readonly byRequest: Readonly<Record<string, number>>;
}

const isSecretRead = (key: string): boolean => key.startsWith('read ') && !/^read (sys|auth)\//.test(key);

/** Sorts `requests` into the columns; logins are those to `auth/<loginMount>/login`. */
export function vaultLoadTraffic(requests: readonly AuditedRequest[], loginMount: string): VaultLoadTraffic {
  const traffic = trafficOf(requests, loginMount);
  const reads = [...traffic.reads].filter(([key]) => isSecretRead(key)).reduce((n, [, count]) => n + count, 0);
  const byRequest = countBy(requests, (r) => `${r.operation} ${r.namespace ? `${r.namespace}/` : ''}${r.path}`);
  return {
    logins: traffic.logins,
    reads,
    mountLookups: traffic.mountLookups,
    other: requests.length - traffic.logins - reads - traffic.mountLookups,
    total: requests.length,
    failed: requests.filter((r) => r.error !== '').length,
    byRequest: Object.fromEntries([...byRequest].sort(([a], [b]) => a.localeCompare(b))),
  };
}
