// Flags of the azure provider. Names and defaults are Azure's provider's (cmd/main.go,
// v1.8.2), so its DaemonSet and Helm arguments start this provider unchanged; the ones
// that configure something we do differently are accepted and ignored with a warning.
import { booleanFlag, parseWholeNumberFlag, stringFlag, type FlagSpec, type ParsedFlags } from '../../lib/flags.js';
import { DEFAULT_READ_WINDOW_MS, parseReadCacheWindowFlag } from '../framework/read-cache.js';
import { parseConnectTo, type ConnectToRule } from './connect-to.js';

/** Default of --cloud-name, as upstream. */
export const DEFAULT_CLOUD_NAME = 'AzurePublicCloud';
/** Most identities (one credential and its Key Vault clients each) kept by default. */
export const DEFAULT_IDENTITY_CACHE_SIZE = 1000;

const ignored = (help: string): FlagSpec => ({ type: 'string', ignored: true, help });

/** Flags of the azure provider (on top of the framework's common ones). */
export const azureProviderFlags: Readonly<Record<string, FlagSpec>> = {
  'construct-pem-chain': {
    type: 'boolean',
    default: true,
    help: 'order the certificates of a certificate-backed secret leaf → intermediates → root',
  },
  'write-cert-and-key-in-separate-files': {
    type: 'boolean',
    default: false,
    help: 'for a certificate-backed secret, also write <name>.crt and <name>.key',
  },
  'cloud-name': {
    type: 'string',
    default: DEFAULT_CLOUD_NAME,
    help: 'cloud used when a class names none: AzurePublicCloud, AzureUSGovernmentCloud, AzureChinaCloud, AzureGermanCloud or AzureStackCloud',
  },
  'read-cache-window': {
    type: 'string',
    default: `${DEFAULT_READ_WINDOW_MS / 1000}s`,
    help: 'how long a Key Vault read of one identity is reused by other Mounts (Go duration); 0 only shares reads in flight',
  },
  'identity-cache-size': {
    type: 'string',
    default: String(DEFAULT_IDENTITY_CACHE_SIZE),
    help: 'most identities (a credential and its Key Vault clients each) kept; the least recently used goes first',
  },
  'custom-user-agent': {
    type: 'string',
    default: '',
    help: "appended to the User-Agent of Key Vault requests (upstream's flag)",
  },
  'healthz-port': {
    type: 'string',
    default: '',
    help: "upstream's health port: serves /healthz and /metrics on :<port> when --health-addr is not given",
  },
  'healthz-path': { type: 'string', default: '/healthz', help: "upstream's health path; only /healthz is served" },
  'test-only-connect-to': {
    type: 'string',
    default: '',
    help: 'TESTS ONLY: host:port=address:port[,…] connects to address:port whenever host:port is dialled (certificates are still checked for host)',
  },
  'healthz-timeout': ignored("upstream's health check RPC timeout; ignored: /healthz answers from the provider itself"),
  'log-format-json': {
    type: 'boolean',
    ignored: true,
    help: "upstream's JSON log switch; ignored: logs are always JSON",
  },
  'enable-pprof': { type: 'boolean', ignored: true, help: "upstream's Go profiler; ignored (use node --cpu-prof)" },
  'pprof-port': ignored("upstream's Go profiler port; ignored"),
  'metrics-backend': ignored("upstream's metrics backend; ignored: Prometheus metrics are on the health address"),
  'prometheus-port': ignored("upstream's metrics port; ignored: /metrics is served on the health address"),
  'token-proxy-url': ignored("upstream's identity-binding proxy; ignored: useAzureTokenProxy is refused"),
  'sni-name': ignored("upstream's identity-binding proxy TLS name; ignored"),
  v: ignored("klog verbosity of upstream's provider; ignored: use --log-level"),
};

/** The provider's settings, parsed once at start. */
export interface AzureSettings {
  readonly constructPemChain: boolean;
  readonly writeCertAndKeyInSeparateFiles: boolean;
  readonly cloudName: string;
  readonly readCacheWindowMs: number;
  readonly identityCacheSize: number;
  /** --custom-user-agent: appended to the Key Vault clients' User-Agent. */
  readonly customUserAgent: string;
  /** AZURE_ENVIRONMENT_FILEPATH: the Azure Stack Hub environment file when a class names none (as upstream). */
  readonly environmentFilePath: string | undefined;
  /** Test-only connect-to rules; empty in production. */
  readonly connectTo: readonly ConnectToRule[];
}

/** Settings from parsed flags; throws an Error naming the flag on a bad value. */
export function azureSettings(
  flags: ParsedFlags,
  env: Readonly<Record<string, string | undefined>> = {},
): AzureSettings {
  if (stringFlag(flags, 'healthz-path') !== '/healthz')
    throw new Error(`--healthz-path: only /healthz is served, got "${stringFlag(flags, 'healthz-path')}"`);
  return Object.freeze({
    constructPemChain: booleanFlag(flags, 'construct-pem-chain'),
    writeCertAndKeyInSeparateFiles: booleanFlag(flags, 'write-cert-and-key-in-separate-files'),
    cloudName: stringFlag(flags, 'cloud-name'),
    readCacheWindowMs: parseReadCacheWindowFlag(stringFlag(flags, 'read-cache-window')),
    identityCacheSize: parseWholeNumberFlag(
      'identity-cache-size',
      stringFlag(flags, 'identity-cache-size'),
      0,
      1_000_000,
    ),
    customUserAgent: userAgentSuffix(stringFlag(flags, 'custom-user-agent')),
    environmentFilePath: env['AZURE_ENVIRONMENT_FILEPATH'] === '' ? undefined : env['AZURE_ENVIRONMENT_FILEPATH'],
    connectTo: Object.freeze(parseConnectTo(stringFlag(flags, 'test-only-connect-to'))),
  });
}

/** --custom-user-agent, checked: printable ASCII without control characters, at most 256 characters. */
function userAgentSuffix(raw: string): string {
  if (!/^[\x20-\x7e]{0,256}$/.test(raw))
    throw new Error('--custom-user-agent must be at most 256 printable ASCII characters');
  return raw.trim();
}

/** The health address: --health-addr when given, else `:<--healthz-port>`, else none. */
export function azureHealthAddress(flags: ParsedFlags): string {
  if (flags.given.has('health-addr')) return stringFlag(flags, 'health-addr');
  const port = stringFlag(flags, 'healthz-port');
  if (port === '') return '';
  const n = parseWholeNumberFlag('healthz-port', port, 0, 65535);
  return `:${n}`;
}
