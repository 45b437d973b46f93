// Counting what a client really sent to OpenBao, from the server's own file audit device
// (startOpenBao({ auditLog: true })): one response entry per request the server handled,
// with its path, operation, outcome and the (HMAC'd) token and display name of the
// caller. Used to show that the vault provider's logins and reads do not multiply with
// pods (integration tests, and the Vault-load benchmark). OpenBao writes an entry before
// it answers, so the log is complete once a call has returned.
import { open } from 'node:fs/promises';

/** One request OpenBao handled, as its audit log tells it. */
export interface AuditedRequest {
  /** API path after /v1/, without the query. */
  readonly path: string;
  /** read, update, create, list, delete, … */
  readonly operation: string;
  /** Namespace path ('' for the root namespace). */
  readonly namespace: string;
  /** The caller's token's display name (`jwt-system:serviceaccount:ns:name` for jwt auth); '' for none (logins). */
  readonly displayName: string;
  /** HMAC of the caller's token: equal for two requests exactly when they used the same token; '' for none. */
  readonly clientToken: string;
  /** The error OpenBao answered with, '' when it succeeded. */
  readonly error: string;
}

interface RawEntry {
  type?: string;
  error?: string;
  auth?: { display_name?: string; client_token?: string } | null;
  request?: { path?: string; operation?: string; namespace?: { path?: string } } | null;
}

/** Reads one OpenBao file audit log from positions the caller marks. */
export class VaultAudit {
  constructor(readonly file: string) {}

  /** Where the log ends now; since(mark) returns what came after. */
  async mark(): Promise<number> {
    const handle = await open(this.file, 'r');
    try {
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  }

  /** Requests OpenBao answered after `mark` (0: since it started), in log order. */
  async since(mark = 0): Promise<AuditedRequest[]> {
    const handle = await open(this.file, 'r');
    let text: string;
    try {
      const size = (await handle.stat()).size;
      const buffer = Buffer.alloc(Math.max(0, size - mark));
      await handle.read(buffer, 0, buffer.length, mark);
      text = buffer.toString('utf8');
    } finally {
      await handle.close();
    }
    const out: AuditedRequest[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const entry = JSON.parse(line) as RawEntry;
      if (entry.type !== 'response' || !entry.request) continue;
      out.push({
        path: entry.request.path ?? '',
        operation: entry.request.operation ?? '',
        namespace: (entry.request.namespace?.path ?? '').replace(/\/$/, ''),
        displayName: entry.auth?.display_name ?? '',
        clientToken: entry.auth?.client_token ?? '',
        error: entry.error ?? '',
      });
    }
    return out;
  }
}

/** How many of `requests` fall under each key (e.g. `${operation} ${path}`). */
export function countBy(
  requests: readonly AuditedRequest[],
  key: (request: AuditedRequest) => string,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) counts.set(key(request), (counts.get(key(request)) ?? 0) + 1);
  return counts;
}

/** What a vault provider cost OpenBao: logins, secret reads by path, lease renewals and mount lookups. */
export interface VaultTraffic {
  readonly logins: number;
  /** Requests other than logins, renewals and mount lookups, by `<operation> <path>`. */
  readonly reads: ReadonlyMap<string, number>;
  readonly renewals: number;
  readonly mountLookups: number;
}

/** `requests` sorted into VaultTraffic; logins are requests to `auth/<loginMount>/login`. */
export function trafficOf(requests: readonly AuditedRequest[], loginMount: string): VaultTraffic {
  const login = `auth/${loginMount}/login`;
  const isLookup = (r: AuditedRequest) => r.path.startsWith('sys/internal/ui/mounts/');
  const isRenewal = (r: AuditedRequest) => r.path === 'sys/leases/renew';
  return {
    logins: requests.filter((r) => r.path === login).length,
    renewals: requests.filter(isRenewal).length,
    mountLookups: requests.filter(isLookup).length,
    reads: countBy(
      requests.filter((r) => r.path !== login && !isLookup(r) && !isRenewal(r)),
      (r) => `${r.operation} ${r.path}`,
    ),
  };
}
