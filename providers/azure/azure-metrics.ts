// The azure provider's own metrics, next to the framework's provider_mount_* on the
// health address's /metrics: the Key Vault requests actually sent and what the read
// window saved. Labels are fixed small sets (an operation, an HTTP status): never a
// vault, an object name or an identity.
import { Counter, Registry } from 'prom-client';

/** How a Key Vault read was answered: from the window, sent, or joined a read in flight. */
export type AzureReadResult = 'hit' | 'miss' | 'coalesced';

const OPERATIONS = [
  'get_secret',
  'get_key',
  'get_certificate',
  'list_secret_versions',
  'list_key_versions',
  'list_certificate_versions',
  'other',
];
const STATUS = /^([1-5][0-9]{2}|error)$/;

/** Counters of the azure provider, registered on one registry. */
export class AzureMetrics {
  private readonly requests: Counter<'operation' | 'status'>;
  private readonly reads: Counter<'result'>;

  /** Registers the counters on `registry` (the provider's /metrics one; a fresh one keeps them private). */
  constructor(registry: Registry = new Registry()) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'azure_keyvault_requests_total',
      help:
        'HTTP requests sent to Key Vault (each page of a version listing and each auth challenge ' +
        'counts), by operation and HTTP status ("error": no response)',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.reads = new Counter({
      name: 'azure_read_cache_total',
      help:
        'Key Vault reads (gets and version listings) by how they were answered: hit (from the ' +
        '--read-cache-window), miss (sent), coalesced (joined the same read in flight)',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['hit', 'miss', 'coalesced']) this.reads.inc({ result }, 0);
  }

  /** One request sent to Key Vault. */
  request(operation: string, status: string): void {
    this.requests.inc({
      operation: OPERATIONS.includes(operation) ? operation : 'other',
      status: STATUS.test(status) ? status : 'error',
    });
  }

  /** One read answered as `result`. */
  read(result: AzureReadResult): void {
    this.reads.inc({ result });
  }
}
