// Where each Vault setting comes from, lowest first: the provider's environment (read
// once at start, as HashiCorp's provider reads VAULT_* through Vault's Go API), the
// provider's flags, then the SecretProviderClass. Flag names and defaults are HashiCorp's
// (main.go, v1.7.4), so its DaemonSet arguments work unchanged. Two differences: a class
// can turn TLS verification back on (`vaultSkipTLSVerify: "false"` wins over
// `--vault-tls-skip-verify`; Go's TLS overlay could only switch it off), and these values
// are handed to the Vault client explicitly: it never reads VAULT_* itself.
import { parseDurationFlag } from '../../lib/duration.js';
import type { FlagSpec, ParsedFlags } from '../../lib/flags.js';
import { booleanFlag, parseGoBool, stringFlag } from '../../lib/flags.js';
import type { VaultObject } from './objects.js';
import { DEFAULT_READ_WINDOW_MS, parseReadCacheWindowFlag } from '../framework/read-cache.js';
import {
  addressProblem,
  namespaceProblem,
  normalizeMountPath,
  parseVaultParameters,
  type PodInfo,
  type VaultTlsLayer,
} from './parameters.js';

/** Vault's own default address (Go API DefaultConfig), used when nothing sets one. */
export const DEFAULT_VAULT_ADDRESS = 'https://127.0.0.1:8200';
/** Auth mount used when neither the class nor --vault-mount names one. */
export const DEFAULT_AUTH_MOUNT = 'kubernetes';
/** Default of --cache-size, as in HashiCorp's provider. */
export const DEFAULT_CACHE_SIZE = 1000;
/** Default of --vault-max-response-bytes: 4 MiB, the driver's default --max-call-recv-msg-size for a whole Mount. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Default of --vault-request-timeout: one Vault call's timeout when the Mount's deadline is further away. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** Flags of the vault provider (on top of the framework's common ones). */
export const vaultProviderFlags: Readonly<Record<string, FlagSpec>> = {
  'vault-addr': {
    type: 'string',
    default: '',
    help: `default Vault address (else $VAULT_ADDR, else ${DEFAULT_VAULT_ADDRESS}); a class's vaultAddress wins`,
  },
  'vault-mount': {
    type: 'string',
    default: DEFAULT_AUTH_MOUNT,
    help: "default auth mount path (kubernetes or jwt auth); a class's vaultAuthMountPath wins",
  },
  'vault-namespace': {
    type: 'string',
    default: '',
    help: "default Vault namespace (else $VAULT_NAMESPACE); a class's vaultNamespace wins",
  },
  'vault-tls-ca-cert': {
    type: 'string',
    default: '',
    help: 'PEM file of the CA to trust for Vault (else $VAULT_CACERT); used over --vault-tls-ca-directory',
  },
  'vault-tls-ca-directory': {
    type: 'string',
    default: '',
    help: 'directory of PEM CA files to trust for Vault (else $VAULT_CAPATH)',
  },
  'vault-tls-server-name': {
    type: 'string',
    default: '',
    help: 'TLS server name (SNI) for Vault (else $VAULT_TLS_SERVER_NAME)',
  },
  'vault-tls-client-cert': {
    type: 'string',
    default: '',
    help: 'PEM client certificate for mTLS with Vault, with --vault-tls-client-key (else $VAULT_CLIENT_CERT)',
  },
  'vault-tls-client-key': {
    type: 'string',
    default: '',
    help: 'PEM client key for mTLS with Vault, with --vault-tls-client-cert (else $VAULT_CLIENT_KEY)',
  },
  'vault-tls-skip-verify': {
    type: 'boolean',
    default: false,
    help: "do not verify Vault's TLS certificate (else $VAULT_SKIP_VERIFY); insecure",
  },
  'vault-request-timeout': {
    type: 'string',
    default: `${DEFAULT_REQUEST_TIMEOUT_MS / 1000}s`,
    help: "longest one Vault call may take (Go duration); less when the Mount's deadline is nearer",
  },
  'vault-max-response-bytes': {
    type: 'string',
    default: String(DEFAULT_MAX_RESPONSE_BYTES),
    help: 'largest Vault answer read, in bytes; a longer one fails the Mount',
  },
  'read-cache-window': {
    type: 'string',
    default: `${DEFAULT_READ_WINDOW_MS / 1000}s`,
    help: 'how long a GET read of one identity is reused (Go duration); 0 only shares reads in flight',
  },
  'cache-size': {
    type: 'string',
    default: String(DEFAULT_CACHE_SIZE),
    help: 'most identities (a Vault token each) kept; 0 keeps none',
  },
  'hmac-key-file': {
    type: 'string',
    default: '',
    help: 'file holding the key that makes versions (a mounted Secret, the same on every node; created if missing)',
  },
  'hmac-secret-name': {
    type: 'string',
    ignored: true,
    help: "HashiCorp's provider keeps its HMAC key in this Secret; ignored: use --hmac-key-file",
  },
  debug: {
    type: 'boolean',
    default: false,
    help: "HashiCorp's deprecated flag: log at debug level when --log-level is not given",
  },
  output: {
    type: 'string',
    ignored: true,
    help: "HashiCorp's --version output format; ignored: --version prints JSON",
  },
};

/** TLS settings for talking to Vault, resolved. */
export interface VaultTlsConfig {
  /** CA file; used instead of caDirectory when both are set. */
  readonly caCertPath: string | undefined;
  readonly caDirectory: string | undefined;
  readonly serverName: string | undefined;
  /** Client certificate and key: both set or both undefined. */
  readonly clientCertPath: string | undefined;
  readonly clientKeyPath: string | undefined;
  readonly skipVerify: boolean;
}

/** The provider's defaults: its environment overlaid with its flags, resolved once at start. */
export interface ProviderSettings {
  readonly vaultAddress: string;
  readonly vaultNamespace: string | undefined;
  readonly vaultAuthMountPath: string;
  readonly tls: VaultTlsConfig;
  readonly cacheSize: number;
  readonly hmacKeyFile: string;
  /** Timeout of one Vault call when the Mount's deadline is further away (--vault-request-timeout). */
  readonly requestTimeoutMs: number;
  /** Largest answer read from Vault (--vault-max-response-bytes). */
  readonly maxResponseBytes: number;
  /** How long a GET read is reused for its identity (--read-cache-window); 0 shares only reads in flight. */
  readonly readCacheWindowMs: number;
}

/** Everything one Mount needs to talk to Vault: provider defaults overlaid with the class. */
export interface VaultMountConfig {
  readonly roleName: string;
  readonly vaultAddress: string;
  readonly vaultNamespace: string | undefined;
  readonly vaultAuthMountPath: string;
  readonly audience: string;
  readonly tls: VaultTlsConfig;
  readonly objects: readonly VaultObject[];
  readonly warnings: readonly string[];
  readonly pod: PodInfo;
}

/** The environment variables read, as Vault's Go API names them. */
export type VaultEnvironment = Readonly<Record<string, string | undefined>>;

/** The first defined value, lowest precedence last. */
function first<T>(...values: (T | undefined)[]): T | undefined {
  return values.find((v) => v !== undefined);
}

function envLayer(env: VaultEnvironment): {
  address?: string | undefined;
  namespace?: string | undefined;
  tls: VaultTlsLayer;
} {
  const get = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const skip = get('VAULT_SKIP_VERIFY');
  const skipVerify = skip === undefined ? undefined : parseGoBool(skip);
  if (skip !== undefined && skipVerify === undefined)
    throw new Error('environment variable VAULT_SKIP_VERIFY must be true or false (Go strconv.ParseBool spellings)');
  return {
    address: get('VAULT_ADDR'),
    namespace: get('VAULT_NAMESPACE'),
    tls: {
      caCertPath: get('VAULT_CACERT'),
      caDirectory: get('VAULT_CAPATH'),
      serverName: get('VAULT_TLS_SERVER_NAME'),
      clientCertPath: get('VAULT_CLIENT_CERT'),
      clientKeyPath: get('VAULT_CLIENT_KEY'),
      skipVerify,
    },
  };
}

function flagLayer(flags: ParsedFlags): {
  address?: string | undefined;
  namespace?: string | undefined;
  tls: VaultTlsLayer;
} {
  const get = (name: string) => (stringFlag(flags, name) === '' ? undefined : stringFlag(flags, name));
  return {
    address: get('vault-addr'),
    namespace: get('vault-namespace'),
    tls: {
      caCertPath: get('vault-tls-ca-cert'),
      caDirectory: get('vault-tls-ca-directory'),
      serverName: get('vault-tls-server-name'),
      clientCertPath: get('vault-tls-client-cert'),
      clientKeyPath: get('vault-tls-client-key'),
      skipVerify: flags.given.has('vault-tls-skip-verify') ? booleanFlag(flags, 'vault-tls-skip-verify') : undefined,
    },
  };
}

/**
 * TLS layers merged, lowest first. The CA (file or directory) and the client pair each
 * come whole from the highest layer that sets them, as Go's per-layer ConfigureTLS does;
 * the server name and skip-verify field by field.
 */
function mergeTls(layers: readonly VaultTlsLayer[]): VaultTlsConfig {
  const top = [...layers].reverse();
  const ca = top.find((l) => l.caCertPath !== undefined || l.caDirectory !== undefined);
  const client = top.find((l) => l.clientCertPath !== undefined);
  return {
    caCertPath: ca?.caCertPath,
    caDirectory: ca?.caDirectory,
    serverName: first(...top.map((l) => l.serverName)),
    clientCertPath: client?.clientCertPath,
    clientKeyPath: client?.clientKeyPath,
    skipVerify: first(...top.map((l) => l.skipVerify)) ?? false,
  };
}

function checkPair(tls: VaultTlsLayer, cert: string, key: string): void {
  if ((tls.clientCertPath === undefined) !== (tls.clientKeyPath === undefined)) {
    throw new Error(
      `${tls.clientCertPath === undefined ? cert : key} is required with ${tls.clientCertPath === undefined ? key : cert}: a client certificate needs its key`,
    );
  }
}

/** --vault-request-timeout in milliseconds: a Go duration of at least 1ms. Throws an Error naming the flag. */
export function parseRequestTimeout(raw: string): number {
  return parseDurationFlag('vault-request-timeout', raw, {
    example: '10s or 1m30s',
    min: [1, '1ms'],
    max: [2 ** 31 - 1, '596h'],
  });
}

/** --vault-max-response-bytes: a whole number of bytes, at least 1. Throws an Error naming the flag. */
export function parseMaxResponseBytes(raw: string): number {
  const n = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1))
    throw new Error(`--vault-max-response-bytes must be a whole number of bytes, at least 1, got "${raw}"`);
  return n;
}

/**
 * The provider's defaults from its environment (`VAULT_ADDR`, `VAULT_NAMESPACE`,
 * `VAULT_CACERT`, `VAULT_CAPATH`, `VAULT_TLS_SERVER_NAME`, `VAULT_CLIENT_CERT`,
 * `VAULT_CLIENT_KEY`, `VAULT_SKIP_VERIFY`) and flags; flags win, '' counts as unset
 * (a boolean flag counts when given). Throws an Error naming the variable or flag.
 */
export function providerSettings(env: VaultEnvironment, flags: ParsedFlags): ProviderSettings {
  const e = envLayer(env);
  const f = flagLayer(flags);
  checkPair(e.tls, 'VAULT_CLIENT_CERT', 'VAULT_CLIENT_KEY');
  checkPair(f.tls, '--vault-tls-client-cert', '--vault-tls-client-key');
  const vaultAddress = first(f.address, e.address) ?? DEFAULT_VAULT_ADDRESS;
  const addrProblem = addressProblem(vaultAddress);
  if (addrProblem) throw new Error(`${f.address !== undefined ? '--vault-addr' : 'VAULT_ADDR'} ${addrProblem}`);
  const vaultNamespace = first(f.namespace, e.namespace);
  const nsProblem = vaultNamespace === undefined ? undefined : namespaceProblem(vaultNamespace);
  if (nsProblem) throw new Error(`${f.namespace !== undefined ? '--vault-namespace' : 'VAULT_NAMESPACE'} ${nsProblem}`);
  const mount = normalizeMountPath(stringFlag(flags, 'vault-mount') || DEFAULT_AUTH_MOUNT);
  if (typeof mount !== 'string') throw new Error(`--vault-mount ${mount.problem}`);
  const cacheText = stringFlag(flags, 'cache-size');
  if (!/^[0-9]{1,9}$/.test(cacheText))
    throw new Error(`--cache-size must be a whole number (0 keeps no identities), got "${cacheText}"`);
  return {
    vaultAddress,
    vaultNamespace,
    vaultAuthMountPath: mount,
    tls: mergeTls([e.tls, f.tls]),
    cacheSize: Number(cacheText),
    hmacKeyFile: stringFlag(flags, 'hmac-key-file'),
    requestTimeoutMs: parseRequestTimeout(stringFlag(flags, 'vault-request-timeout')),
    maxResponseBytes: parseMaxResponseBytes(stringFlag(flags, 'vault-max-response-bytes')),
    readCacheWindowMs: parseReadCacheWindowFlag(stringFlag(flags, 'read-cache-window')),
  };
}

/**
 * One Mount's settings: the class parameters (`attributes`) over the provider's
 * settings. Throws INVALID_ARGUMENT naming the parameter for a bad class.
 */
export function mountConfig(
  settings: ProviderSettings,
  attributes: Readonly<Record<string, string>>,
): VaultMountConfig {
  const p = parseVaultParameters(attributes);
  const providerTls: VaultTlsLayer = settings.tls;
  return {
    roleName: p.roleName,
    vaultAddress: p.vaultAddress ?? settings.vaultAddress,
    vaultNamespace: p.vaultNamespace ?? settings.vaultNamespace,
    vaultAuthMountPath: p.vaultAuthMountPath ?? settings.vaultAuthMountPath,
    audience: p.audience,
    tls: mergeTls([providerTls, p.tls]),
    objects: p.objects,
    warnings: p.warnings,
    pod: p.pod,
  };
}

/** env < flags < class parameters, in one call: what a Mount gets from a fresh provider. */
export function resolveSettings(
  env: VaultEnvironment,
  flags: ParsedFlags,
  attributes: Readonly<Record<string, string>>,
): VaultMountConfig {
  return mountConfig(providerSettings(env, flags), attributes);
}
