// The Key Vault edge: the three SDK clients of one vault for one identity, and the six
// reads the provider makes, turned into plain data. Clients pin REST API 7.6 and run
// with SDK retries off (throttle-retry.ts retries within the Mount's deadline). Each
// HTTP request is counted by operation and status for the metrics.
import type { Agent } from 'node:https';
import type { TokenCredential } from '@azure/core-auth';
import { CertificateClient } from '@azure/keyvault-certificates';
import { KeyClient } from '@azure/keyvault-keys';
import { SecretClient } from '@azure/keyvault-secrets';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import { packageVersion } from '../../lib/version.js';
import type { VersionProperties } from './version-history.js';

/** Key Vault REST API version every client speaks. */
export const KEY_VAULT_API_VERSION = '7.6' as const;

/** Object kinds as Azure's provider names them. */
export type KeyVaultObjectType = 'secret' | 'key' | 'cert';

/** A secret version as read: value plus what decides how it is written. */
export interface SecretRead {
  readonly version: string;
  readonly value: string;
  readonly contentType: string | undefined;
  /** Set when the secret backs a certificate (Key Vault's `kid`). */
  readonly keyId: string | undefined;
}

/** A key version as read: its public JSON Web Key. */
export interface KeyRead {
  readonly version: string;
  readonly jwk: {
    readonly kty?: string;
    readonly n?: Uint8Array;
    readonly e?: Uint8Array;
    readonly crv?: string;
    readonly x?: Uint8Array;
    readonly y?: Uint8Array;
  };
}

/** A certificate version as read: its DER bytes. */
export interface CertificateRead {
  readonly version: string;
  readonly cer: Uint8Array;
}

/** Counts each HTTP request the clients send (operation, HTTP status or error code). */
export type RequestCounter = (operation: string, status: string) => void;

/** A pipeline policy that counts every request after retries and auth (one per wire request). */
function countingPolicy(count: RequestCounter): PipelinePolicy {
  return {
    name: 'sscRequestCounter',
    async sendRequest(request, next) {
      const operation = operationOf(request.method, new URL(request.url).pathname);
      try {
        const response = await next(request);
        count(operation, String(response.status));
        return response;
      } catch (err) {
        const e = err as { statusCode?: unknown; code?: unknown };
        count(operation, typeof e.statusCode === 'number' ? String(e.statusCode) : 'error');
        throw err;
      }
    },
  };
}

/** The operation a Key Vault request path names: get_secret, list_secret_versions, … */
export function operationOf(method: string, path: string): string {
  const parts = path.split('/').filter((p) => p !== '');
  const kind = ({ secrets: 'secret', keys: 'key', certificates: 'certificate' } as Record<string, string>)[
    parts[0] ?? ''
  ];
  if (kind === undefined || method !== 'GET') return 'other';
  return parts[2] === 'versions' && parts.length === 3 ? `list_${kind}_versions` : `get_${kind}`;
}

/** How every Key Vault client is built. */
export interface KeyVaultClientOptions {
  /** The connect-to agent (tests), else the SDK's own. */
  readonly agent: Agent | undefined;
  readonly count: RequestCounter;
  /** --custom-user-agent ('' for none). */
  readonly userAgent: string;
}

/** The three clients of one vault, for one credential. */
export class KeyVaultReader {
  private readonly secrets: SecretClient;
  private readonly keys: KeyClient;
  private readonly certificates: CertificateClient;

  constructor(vaultUrl: string, credential: TokenCredential, options: KeyVaultClientOptions) {
    const common = {
      serviceVersion: KEY_VAULT_API_VERSION,
      retryOptions: { maxRetries: 0 },
      userAgentOptions: {
        userAgentPrefix: `secrets-store-csi-provider-azure/${packageVersion()}${options.userAgent === '' ? '' : ` ${options.userAgent}`}`,
      },
      additionalPolicies: [{ policy: countingPolicy(options.count), position: 'perRetry' as const }],
      ...(options.agent ? { agent: options.agent } : {}),
    };
    this.secrets = new SecretClient(vaultUrl, credential, common);
    this.keys = new KeyClient(vaultUrl, credential, common);
    this.certificates = new CertificateClient(vaultUrl, credential, common);
  }

  /** A secret's version (latest when `version` is ''). */
  async getSecret(name: string, version: string, abortSignal: AbortSignal): Promise<SecretRead> {
    const s = await this.secrets.getSecret(name, { version: version === '' ? undefined : version, abortSignal });
    return {
      version: s.properties.version ?? '',
      value: s.value ?? '',
      contentType: s.properties.contentType,
      keyId: s.properties.certificateKeyId,
    };
  }

  /** A key's version (latest when `version` is ''). */
  async getKey(name: string, version: string, abortSignal: AbortSignal): Promise<KeyRead> {
    const k = await this.keys.getKey(name, { version: version === '' ? undefined : version, abortSignal });
    const jwk = k.key ?? {};
    return {
      version: k.properties.version ?? '',
      jwk: { kty: jwk.kty, n: jwk.n, e: jwk.e, crv: jwk.crv, x: jwk.x, y: jwk.y },
    };
  }

  /** A certificate's version (latest when `version` is ''). */
  async getCertificate(name: string, version: string, abortSignal: AbortSignal): Promise<CertificateRead> {
    const c =
      version === ''
        ? await this.certificates.getCertificate(name, { abortSignal })
        : await this.certificates.getCertificateVersion(name, version, { abortSignal });
    return { version: c.properties.version ?? '', cer: c.cer ?? new Uint8Array() };
  }

  /**
   * Every version of an object, without values; undefined when there are more than
   * `maxPages` pages (Key Vault lists at most 25 versions a page, in no set order).
   */
  async listVersions(
    type: KeyVaultObjectType,
    name: string,
    abortSignal: AbortSignal,
    maxPages = Infinity,
  ): Promise<VersionProperties[] | undefined> {
    const pages =
      type === 'secret'
        ? this.secrets.listPropertiesOfSecretVersions(name, { abortSignal }).byPage()
        : type === 'key'
          ? this.keys.listPropertiesOfKeyVersions(name, { abortSignal }).byPage()
          : this.certificates.listPropertiesOfCertificateVersions(name, { abortSignal }).byPage();
    const versions: VersionProperties[] = [];
    let count = 0;
    for await (const page of pages) {
      if (++count > maxPages) return undefined;
      for (const p of page) versions.push({ version: p.version ?? '', createdOn: p.createdOn, enabled: p.enabled });
    }
    return versions;
  }
}
