// Stand-in for Microsoft Entra ID's directory (test only; no real Entra can run here, see
// docs/conformance.md): tenants, app registrations with client secrets and federated
// identity credentials (issuer, subject, audience — matched case-sensitively as Entra does
// since 2025), and a node's managed identities (system-assigned and user-assigned) that IMDS
// hands tokens for.
import { createPublicKey, type JsonWebKey, type KeyObject, randomUUID } from 'node:crypto';
import type { Principal } from './vault-store.js';

/** The audience Entra expects in a workload identity client assertion by default. */
export const TOKEN_EXCHANGE_AUDIENCE = 'api://AzureADTokenExchange';

/** One federated identity credential of an app. */
export interface FederatedCredential {
  readonly issuer: string;
  readonly subject: string;
  readonly audience: string;
  readonly keys: readonly KeyObject[];
}

/** An app registration (and its service principal's object id). */
export interface AppRegistration extends Principal {
  readonly tenantId: string;
  readonly secrets: Set<string>;
  readonly federated: FederatedCredential[];
}

/** A managed identity of the node IMDS serves. */
export interface ManagedIdentity extends Principal {
  readonly tenantId: string;
  readonly systemAssigned: boolean;
}

/** Public keys an issuer signs with: KeyObjects, PEM texts or JWKs (e.g. a JWKS's `keys`). */
export type IssuerKeys = readonly (KeyObject | string | JsonWebKey)[];

function toKey(k: KeyObject | string | JsonWebKey): KeyObject {
  if (typeof k === 'string') return createPublicKey(k);
  if ('asymmetricKeyType' in k && typeof (k as KeyObject).export === 'function') {
    const ko = k as KeyObject;
    return ko.type === 'private' ? createPublicKey(ko) : ko;
  }
  return createPublicKey({ key: k as JsonWebKey, format: 'jwk' });
}

/** Tenants, apps and managed identities. */
export class EntraDirectory {
  private readonly tenants = new Map<string, Map<string, AppRegistration>>();
  private readonly identities: ManagedIdentity[] = [];

  /** Adds a tenant (a new GUID unless given); returns its id. */
  addTenant(tenantId: string = randomUUID()): string {
    if (!this.tenants.has(tenantId)) this.tenants.set(tenantId, new Map());
    return tenantId;
  }

  /** Whether a tenant exists. */
  hasTenant(tenantId: string): boolean {
    return this.tenants.has(tenantId);
  }

  /** Registers an app (or adds a secret to it); returns its principal. */
  registerApp(tenantId: string, clientId: string, secret?: string): AppRegistration {
    const apps = this.tenants.get(tenantId);
    if (apps === undefined) throw new Error(`stand-in: no tenant ${tenantId}`);
    const app = apps.get(clientId) ?? {
      tenantId,
      clientId,
      objectId: randomUUID(),
      secrets: new Set<string>(),
      federated: [],
    };
    if (secret !== undefined) app.secrets.add(secret);
    apps.set(clientId, app);
    return app;
  }

  /** The app `clientId` of `tenantId`, if registered. */
  app(tenantId: string, clientId: string): AppRegistration | undefined {
    return this.tenants.get(tenantId)?.get(clientId);
  }

  /** Adds a federated identity credential to an app (registering the app if needed). */
  federate(
    tenantId: string,
    clientId: string,
    issuer: string,
    keys: IssuerKeys,
    subject: string,
    audience = TOKEN_EXCHANGE_AUDIENCE,
  ): AppRegistration {
    const app = this.registerApp(tenantId, clientId);
    app.federated.push({ issuer, subject, audience, keys: keys.map(toKey) });
    return app;
  }

  /** Adds a managed identity to the node: system-assigned when `clientId` is undefined. */
  addManagedIdentity(tenantId: string, clientId: string | undefined): ManagedIdentity {
    const systemAssigned = clientId === undefined;
    if (systemAssigned) {
      const existing = this.identities.find((i) => i.systemAssigned);
      if (existing) return existing;
    }
    const mi = { tenantId, clientId: clientId ?? randomUUID(), objectId: randomUUID(), systemAssigned };
    this.identities.push(mi);
    return mi;
  }

  /** The node's managed identities. */
  managedIdentities(): readonly ManagedIdentity[] {
    return this.identities;
  }
}
