// Stand-in for Azure Key Vault's response bodies (test only; no real Key Vault can run here,
// see docs/conformance.md). Field names and shapes of SecretBundle/SecretItem,
// KeyBundle/KeyItem (JsonWebKey: kid, kty, key_ops, n/e or crv/x/y), CertificateBundle/
// CertificateItem (id, kid, sid, x5t, cer, policy) as in the Key Vault REST reference 7.6
// and the @azure/keyvault-* generated models.
import type { CertificateVersion, KeyVersion, SecretVersion, VaultStore, VersionAttributes } from './vault-store.js';

/** Recovery settings of a soft-delete vault with the default 90-day retention. */
const RECOVERY = { recoveryLevel: 'Recoverable+Purgeable', recoverableDays: 90 };

function attributes(a: VersionAttributes, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    enabled: a.enabled,
    ...(a.nbf === undefined ? {} : { nbf: a.nbf }),
    ...(a.exp === undefined ? {} : { exp: a.exp }),
    created: a.created,
    updated: a.updated,
    ...RECOVERY,
    ...extra,
  };
}

function tags(t: Record<string, string> | undefined): Record<string, unknown> {
  return t === undefined ? {} : { tags: t };
}

/** SecretBundle; `withValue` false for update answers (properties only). */
export function secretBundle(
  vault: VaultStore,
  name: string,
  v: SecretVersion,
  withValue = true,
): Record<string, unknown> {
  return {
    ...(withValue ? { value: v.value } : {}),
    ...(v.contentType === undefined ? {} : { contentType: v.contentType }),
    id: `${vault.baseUrl}/secrets/${name}/${v.version}`,
    attributes: attributes(v.attributes),
    ...tags(v.tags),
    ...(v.kid === undefined ? {} : { kid: v.kid }),
    ...(v.managed === true ? { managed: true } : {}),
  };
}

/** SecretItem (list answers: never a value). */
export function secretItem(
  vault: VaultStore,
  name: string,
  v: SecretVersion,
  versioned: boolean,
): Record<string, unknown> {
  return {
    id: versioned ? `${vault.baseUrl}/secrets/${name}/${v.version}` : `${vault.baseUrl}/secrets/${name}`,
    attributes: attributes(v.attributes),
    ...tags(v.tags),
    ...(v.contentType === undefined ? {} : { contentType: v.contentType }),
    ...(v.managed === true ? { managed: true } : {}),
  };
}

/** KeyBundle with the public JWK. */
export function keyBundle(vault: VaultStore, name: string, v: KeyVersion): Record<string, unknown> {
  return {
    key: { kid: `${vault.baseUrl}/keys/${name}/${v.version}`, key_ops: v.keyOps, ...v.jwk },
    attributes: attributes(v.attributes, { exportable: false }),
    ...tags(v.tags),
    ...(v.managed === true ? { managed: true } : {}),
  };
}

/** KeyItem. */
export function keyItem(vault: VaultStore, name: string, v: KeyVersion, versioned: boolean): Record<string, unknown> {
  return {
    kid: versioned ? `${vault.baseUrl}/keys/${name}/${v.version}` : `${vault.baseUrl}/keys/${name}`,
    attributes: attributes(v.attributes, { exportable: false }),
    ...tags(v.tags),
    ...(v.managed === true ? { managed: true } : {}),
  };
}

function policy(
  vault: VaultStore,
  name: string,
  v: CertificateVersion,
  key: KeyVersion | undefined,
): Record<string, unknown> {
  const rsa = key?.jwk.kty.startsWith('RSA') ?? true;
  const keyProps = rsa
    ? {
        exportable: true,
        kty: 'RSA',
        key_size: Buffer.from(key?.jwk.n ?? '', 'base64url').length * 8,
        reuse_key: false,
      }
    : { exportable: true, kty: 'EC', crv: key?.jwk.crv, reuse_key: false };
  return {
    id: `${vault.baseUrl}/certificates/${name}/policy`,
    key_props: keyProps,
    secret_props: { contentType: v.contentType },
    x509_props: { subject: v.subject, validity_months: 12 },
    lifetime_actions: [{ trigger: { lifetime_percentage: 80 }, action: { action_type: 'EmailContacts' } }],
    issuer: { name: 'Unknown' },
    attributes: { enabled: true, created: v.attributes.created, updated: v.attributes.created },
  };
}

/** CertificateBundle: `cer` (base64 DER of the leaf), `x5t`, `kid`/`sid` of the same version, policy. */
export function certificateBundle(vault: VaultStore, name: string, v: CertificateVersion): Record<string, unknown> {
  const key = vault.versions('keys', name)?.find((k) => k.version === v.version);
  return {
    id: `${vault.baseUrl}/certificates/${name}/${v.version}`,
    kid: `${vault.baseUrl}/keys/${name}/${v.version}`,
    sid: `${vault.baseUrl}/secrets/${name}/${v.version}`,
    x5t: v.x5t,
    cer: v.cer.toString('base64'),
    attributes: attributes(v.attributes),
    ...tags(v.tags),
    policy: policy(vault, name, v, key),
  };
}

/** CertificateItem. */
export function certificateItem(
  vault: VaultStore,
  name: string,
  v: CertificateVersion,
  versioned: boolean,
): Record<string, unknown> {
  return {
    id: versioned ? `${vault.baseUrl}/certificates/${name}/${v.version}` : `${vault.baseUrl}/certificates/${name}`,
    x5t: v.x5t,
    attributes: attributes(v.attributes),
    ...tags(v.tags),
  };
}
