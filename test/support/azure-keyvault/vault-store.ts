// Stand-in for one Azure Key Vault's contents (test only; no real Key Vault can run here,
// see docs/conformance.md). Keeps what the Key Vault REST API 7.6 reports per object
// version: secrets (value, contentType, kid/managed for a certificate's backing secret),
// keys (public JWK) and certificates (cer, x5t), each with `enabled`/`created`/`updated`
// attributes in Unix seconds, version ids of 32 hex characters, plus the vault's access
// policies (per principal object id, object kind and permission: get, list).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  type CertificateMaterial,
  describeCertificate,
  pemSecretValue,
  pfxSecretValue,
  publicJwk,
  type PublicJwk,
} from './certificates.js';
import { type StandInClock, unixSeconds } from './clock.js';

/** Key Vault's object collections (the first path segment). */
export type ObjectKind = 'secrets' | 'keys' | 'certificates';

/** Access-policy permissions the stand-in checks (set and update are not granted to readers). */
export type AccessPermission = 'get' | 'list' | 'set' | 'update';

/** The `attributes` every version carries (Unix seconds). */
export interface VersionAttributes {
  enabled: boolean;
  readonly created: number;
  updated: number;
  readonly nbf?: number;
  readonly exp?: number;
}

interface BaseVersion {
  readonly version: string;
  readonly attributes: VersionAttributes;
  tags: Record<string, string> | undefined;
}
/** One secret version. */
export interface SecretVersion extends BaseVersion {
  readonly value: string;
  contentType: string | undefined;
  readonly kid?: string;
  readonly managed?: boolean;
}
/** One key version (only the public part is ever returned). */
export interface KeyVersion extends BaseVersion {
  readonly jwk: PublicJwk;
  readonly keyOps: readonly string[];
  readonly managed?: boolean;
}
/** One certificate version. */
export interface CertificateVersion extends BaseVersion {
  readonly cer: Buffer;
  readonly x5t: string;
  readonly subject: string;
  readonly contentType: string;
}
type AnyVersion = SecretVersion | KeyVersion | CertificateVersion;

/** A principal as Key Vault sees it in a token: application (client) id and object id. */
export interface Principal {
  readonly clientId: string;
  readonly objectId: string;
}

/** Options of `setSecret`. */
export interface SetSecretOptions {
  readonly contentType?: string;
  readonly tags?: Record<string, string>;
  readonly enabled?: boolean;
}

/** Key types `createKey` makes (Key Vault's JsonWebKeyType; -HSM only changes the label here). */
export type StandInKeyType = 'RSA' | 'RSA-HSM' | 'EC' | 'EC-HSM';
const RSA_OPS = ['sign', 'verify', 'wrapKey', 'unwrapKey', 'encrypt', 'decrypt'];
const EC_OPS = ['sign', 'verify'];
const NODE_CURVES: Record<string, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };

/** A new 32-hex-character version id, as Key Vault's. */
export function newVersionId(): string {
  return randomBytes(16).toString('hex');
}

/** One vault: objects by kind and name (versions in creation order), and access policies. */
export class VaultStore {
  private readonly objects: Record<ObjectKind, Map<string, AnyVersion[]>> = {
    secrets: new Map(),
    keys: new Map(),
    certificates: new Map(),
  };
  private readonly policies = new Map<string, Map<ObjectKind, Set<AccessPermission>>>();

  constructor(
    readonly name: string,
    readonly host: string,
    readonly tenantId: string,
    private readonly clock: StandInClock,
  ) {}

  /** `https://<host>` — the base of every id the vault returns. */
  get baseUrl(): string {
    return `https://${this.host}`;
  }

  private attributes(enabled = true): VersionAttributes {
    const now = unixSeconds(this.clock);
    return { enabled, created: now, updated: now };
  }

  private add(kind: ObjectKind, name: string, v: AnyVersion): string {
    const list = this.objects[kind].get(name) ?? [];
    list.push(v);
    this.objects[kind].set(name, list);
    return v.version;
  }

  /** Adds a secret version (it becomes the latest); returns its version id. */
  setSecret(name: string, value: string, options: SetSecretOptions = {}): string {
    return this.add('secrets', name, {
      version: newVersionId(),
      value,
      contentType: options.contentType,
      tags: options.tags,
      attributes: this.attributes(options.enabled ?? true),
    });
  }

  /** Adds a key version of a freshly generated key; returns its version id. */
  createKey(
    name: string,
    kty: StandInKeyType = 'RSA',
    options: { readonly size?: number; readonly crv?: 'P-256' | 'P-384' | 'P-521' } = {},
  ): string {
    const hsm = kty.endsWith('-HSM');
    const { publicKey } = kty.startsWith('RSA')
      ? generateKeyPairSync('rsa', { modulusLength: options.size ?? 2048 })
      : generateKeyPairSync('ec', { namedCurve: NODE_CURVES[options.crv ?? 'P-256'] as string });
    return this.add('keys', name, {
      version: newVersionId(),
      jwk: publicJwk(publicKey, hsm),
      keyOps: kty.startsWith('RSA') ? RSA_OPS : EC_OPS,
      tags: undefined,
      attributes: this.attributes(),
    });
  }

  /**
   * Imports a certificate as Key Vault does: a certificate, a managed key and a managed
   * backing secret, all three under one new version id; returns it.
   */
  async importCertificate(
    name: string,
    material: CertificateMaterial,
    contentType: 'application/x-pkcs12' | 'application/x-pem-file' = 'application/x-pkcs12',
  ): Promise<string> {
    const info = describeCertificate(material);
    const value = contentType === 'application/x-pkcs12' ? await pfxSecretValue(material) : pemSecretValue(material);
    const version = newVersionId();
    const at = () => ({ ...this.attributes(), nbf: info.notBefore, exp: info.expires });
    this.add('certificates', name, {
      version,
      cer: info.cer,
      x5t: info.x5t,
      subject: info.subject,
      contentType,
      tags: undefined,
      attributes: at(),
    });
    this.add('keys', name, {
      version,
      jwk: info.jwk,
      keyOps: info.jwk.kty.startsWith('RSA') ? RSA_OPS : EC_OPS,
      managed: true,
      tags: undefined,
      attributes: at(),
    });
    this.add('secrets', name, {
      version,
      value,
      contentType,
      kid: `${this.baseUrl}/keys/${name}/${version}`,
      managed: true,
      tags: undefined,
      attributes: at(),
    });
    return version;
  }

  /** All versions of an object, oldest first (undefined when the object does not exist). */
  versions(kind: 'secrets', name: string): readonly SecretVersion[] | undefined;
  versions(kind: 'keys', name: string): readonly KeyVersion[] | undefined;
  versions(kind: 'certificates', name: string): readonly CertificateVersion[] | undefined;
  versions(kind: ObjectKind, name: string): readonly AnyVersion[] | undefined;
  versions(kind: ObjectKind, name: string): readonly AnyVersion[] | undefined {
    return this.objects[kind].get(name);
  }

  /** Object names of a kind. */
  names(kind: ObjectKind): string[] {
    return [...this.objects[kind].keys()];
  }

  /** Enables or disables a version (the latest when none is named); a certificate's key and secret follow it. */
  setEnabled(kind: ObjectKind, name: string, enabled: boolean, version?: string): void {
    const kinds: ObjectKind[] = kind === 'certificates' ? ['certificates', 'keys', 'secrets'] : [kind];
    const target = version ?? this.versions(kind, name)?.at(-1)?.version;
    for (const k of kinds) {
      const v = this.versions(k, name)?.find((x) => x.version === target);
      if (v === undefined) {
        if (k === kind) throw new Error(`stand-in: no ${kind} ${name}/${String(target)} in vault ${this.name}`);
        continue;
      }
      v.attributes.enabled = enabled;
      v.attributes.updated = unixSeconds(this.clock);
    }
  }

  /** Deletes an object and all its versions (a certificate takes its key and secret along). */
  delete(kind: ObjectKind, name: string): void {
    const kinds: ObjectKind[] = kind === 'certificates' ? ['certificates', 'keys', 'secrets'] : [kind];
    for (const k of kinds) this.objects[k].delete(name);
  }

  /**
   * Gives a principal permissions on the named kinds (an access policy entry): get and
   * list by default; `['get']` is what Azure's provider's docs grant
   * (`az keyvault set-policy --secret-permissions get`).
   */
  grant(
    principal: Principal,
    kinds: readonly ObjectKind[],
    permissions: readonly AccessPermission[] = ['get', 'list'],
  ): void {
    const entry = this.policies.get(principal.objectId) ?? new Map<ObjectKind, Set<AccessPermission>>();
    for (const k of kinds) entry.set(k, new Set([...(entry.get(k) ?? []), ...permissions]));
    this.policies.set(principal.objectId, entry);
  }

  /** Removes a principal's access policy entry. */
  revoke(principal: Principal): void {
    this.policies.delete(principal.objectId);
  }

  /** Whether the principal (by object id) has `permission` on objects of `kind`. */
  allows(objectId: string, kind: ObjectKind, permission: AccessPermission): boolean {
    return this.policies.get(objectId)?.get(kind)?.has(permission) ?? false;
  }
}
