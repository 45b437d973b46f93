// One credential per identity, kept across Mounts, so that the pods of one workload
// share one Entra token (MSAL caches it inside the credential) instead of asking Entra
// on every Mount, and never one across identities. An identity is:
// - workload identity: tenant, client id and the pod's service account (the assertion
//   is that account's token; two accounts federated to one app are still two identities);
// - service principal: tenant, client id and a keyed digest of the client secret (never
//   the secret itself: a rotated secret is a new identity, the old one ages out);
// - managed identity: the user-assigned client id, or the node's system identity.
// Each identity keeps its Key Vault clients per vault, so Key Vault's auth challenge is
// answered once per vault, not once per Mount.
import { createHmac, randomBytes } from 'node:crypto';
import type { Agent } from 'node:https';
import type { TokenCredential } from '@azure/core-auth';
import { ClientAssertionCredential, ClientSecretCredential, ManagedIdentityCredential } from '@azure/identity';
import { LRUCache } from 'lru-cache';
import { entryBound } from '../framework/lru-options.js';
import type { IdentityKind } from './azure-errors.js';
import { KeyVaultReader, type KeyVaultClientOptions } from './keyvault-reader.js';
import type { AzureAuth } from './parameters.js';

/** Vaults whose clients one identity keeps. */
const VAULTS_PER_IDENTITY = 16;

/** What an identity needs beyond its auth settings: where Entra is. */
export interface IdentityPlace {
  readonly tenantId: string;
  readonly authorityHost: string;
  /** True for an authority Entra's instance discovery does not know (Azure Stack). */
  readonly customAuthority: boolean;
  /** The pod's service account (workload identity keys by it). */
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
}

/** The words for an auth mode in messages. */
export function identityKindOf(auth: AzureAuth): IdentityKind {
  return auth.kind === 'workload-identity'
    ? 'workload identity'
    : auth.kind === 'service-principal'
      ? 'service principal'
      : 'managed identity';
}

/** The cache key of an identity; `secretKey` keys the client-secret digest. */
export function identityKey(auth: AzureAuth, place: IdentityPlace, secretKey: Buffer): string {
  switch (auth.kind) {
    case 'workload-identity':
      return JSON.stringify([
        'wi',
        place.authorityHost,
        place.tenantId,
        auth.clientId,
        place.serviceAccount.namespace,
        place.serviceAccount.name,
      ]);
    case 'service-principal':
      return JSON.stringify([
        'sp',
        place.authorityHost,
        place.tenantId,
        auth.clientId,
        createHmac('sha256', secretKey).update(auth.clientSecret).digest('hex'),
      ]);
    case 'managed-identity':
      return JSON.stringify(['mi', auth.userAssignedIdentityId ?? '']);
  }
}

/** One identity's credential and its Key Vault clients. */
export class Identity {
  /** Workload identity: the latest service-account token a Mount of this identity brought. */
  assertion = '';
  private readonly readers = new LRUCache<string, KeyVaultReader>({ max: VAULTS_PER_IDENTITY });

  constructor(
    readonly kind: IdentityKind,
    readonly credential: TokenCredential,
    private readonly clients: KeyVaultClientOptions,
  ) {}

  /** The Key Vault clients of `vaultUrl` for this identity. */
  reader(vaultUrl: string): KeyVaultReader {
    let reader = this.readers.get(vaultUrl);
    if (!reader) {
      reader = new KeyVaultReader(vaultUrl, this.credential, this.clients);
      this.readers.set(vaultUrl, reader);
    }
    return reader;
  }
}

function credentialFor(
  auth: AzureAuth,
  place: IdentityPlace,
  agent: Agent | undefined,
  assertion: () => string,
): TokenCredential {
  const options = {
    authorityHost: place.authorityHost,
    disableInstanceDiscovery: place.customAuthority,
    ...(agent ? { agent } : {}),
  };
  switch (auth.kind) {
    case 'workload-identity':
      return new ClientAssertionCredential(place.tenantId, auth.clientId, async () => assertion(), options);
    case 'service-principal':
      return new ClientSecretCredential(place.tenantId, auth.clientId, auth.clientSecret, options);
    case 'managed-identity':
      // IMDS is plain HTTP on the node; AZURE_POD_IDENTITY_AUTHORITY_HOST (an Azure SDK
      // variable) points elsewhere. The connect-to agent is for HTTPS hosts only.
      return auth.userAssignedIdentityId === undefined
        ? new ManagedIdentityCredential()
        : new ManagedIdentityCredential({ clientId: auth.userAssignedIdentityId });
  }
}

/** Identities by key, the least recently used forgotten first; a capacity of 0 keeps none. */
export class IdentityCache {
  private readonly identities: LRUCache<string, Identity> | undefined;
  private readonly secretKey = randomBytes(32);

  constructor(
    capacity: number,
    private readonly clients: KeyVaultClientOptions,
  ) {
    // lru-cache has no "keep nothing" bound: no cache at all is that.
    this.identities = capacity > 0 ? new LRUCache(entryBound(capacity)) : undefined;
  }

  /** The identity for `auth` at `place`, created on first use; a workload identity takes `token` as its assertion. */
  identity(auth: AzureAuth, place: IdentityPlace): Identity {
    const key = identityKey(auth, place, this.secretKey);
    let identity = this.identities?.get(key);
    if (!identity) {
      const created: Identity = new Identity(
        identityKindOf(auth),
        credentialFor(auth, place, this.clients.agent, () => created.assertion),
        this.clients,
      );
      identity = created;
      this.identities?.set(key, identity);
    }
    if (auth.kind === 'workload-identity') identity.assertion = auth.token;
    return identity;
  }
}
