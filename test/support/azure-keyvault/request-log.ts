// Stand-in request log for Azure Key Vault / Microsoft Entra ID / IMDS (test only; no real
// peer can run here, see docs/conformance.md). What a test counts: which operations ran,
// with what status, whether the caller was authorised and as whom. Never a secret value,
// token, client secret or assertion: only method, host, path and the query (Key Vault and
// IMDS queries carry no secrets; Entra token requests are POST bodies, never logged).

/** Which side of the stand-in answered. */
export type StandInService = 'keyvault' | 'entra' | 'imds';

/** One answered request. */
export interface RequestRecord {
  /** Wall-clock milliseconds when the answer was sent (for Retry-After checks). */
  readonly at: number;
  readonly service: StandInService;
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly status: number;
  /** `getSecret`, `getSecretVersions`, `token`, `managedIdentityToken`, … */
  readonly operation: string;
  /** Whether a valid credential/token came with the request. */
  readonly authorized: boolean;
  /** Client id of the principal the request was made as, when known. */
  readonly principal?: string;
}

/** An append-only list of records. */
export class RequestLog {
  private readonly records: RequestRecord[] = [];

  /** Appends one record. */
  add(record: RequestRecord): void {
    this.records.push(record);
  }

  /** A copy of all records so far. */
  all(): RequestRecord[] {
    return [...this.records];
  }

  /** Forgets all records (between test phases). */
  clear(): void {
    this.records.length = 0;
  }
}
