// Stand-in for the Azure Instance Metadata Service's managed identity endpoint (test only;
// no real IMDS can be reached here, see docs/conformance.md). Follows "How to use managed
// identities for Azure resources on an Azure VM to acquire an access token": GET
// /metadata/identity/oauth2/token?api-version=2018-02-01&resource=…[&client_id=|object_id=]
// with `Metadata: true`; answers `access_token`, `expires_in`, `expires_on`, `not_before`,
// `resource`, `token_type`, `client_id` (numbers as strings, as IMDS sends them); errors
// `{ error: "invalid_request", error_description: "Identity not found" }` etc. with 400.
// The SDK reaches it through AZURE_POD_IDENTITY_AUTHORITY_HOST.
import type { StandInCloud } from './clouds.js';
import type { EntraDirectory, ManagedIdentity } from './entra-directory.js';
import type { TokenAuthority } from './token-authority.js';

/** An IMDS answer plus what the request log records. */
export interface ImdsAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly operation: string;
  readonly principal?: string;
}

// The SDK asks for the path with a trailing slash; IMDS (and AKS pod identity) accept both.
const TOKEN_PATH = '/metadata/identity/oauth2/token';

function bad(description: string, error = 'invalid_request'): ImdsAnswer {
  return { status: 400, body: { error, error_description: description }, operation: 'managedIdentityToken' };
}

/** Picks the identity a token request names (or the default one), or says why none. */
export function selectIdentity(all: readonly ManagedIdentity[], query: URLSearchParams): ManagedIdentity | string {
  const clientId = query.get('client_id');
  const objectId = query.get('object_id') ?? query.get('principal_id');
  const resourceId = query.get('msi_res_id') ?? query.get('mi_res_id');
  if (resourceId !== null) return 'Identity not found';
  if (clientId !== null) return all.find((i) => !i.systemAssigned && i.clientId === clientId) ?? 'Identity not found';
  if (objectId !== null) return all.find((i) => !i.systemAssigned && i.objectId === objectId) ?? 'Identity not found';
  const system = all.find((i) => i.systemAssigned);
  if (system) return system;
  const users = all.filter((i) => !i.systemAssigned);
  if (users.length === 1 && users[0] !== undefined) return users[0];
  return users.length > 1
    ? 'Multiple user assigned identities exist, please specify the clientId / resourceId of the identity in the token request'
    : 'Identity not found';
}

/** Answers one IMDS request. */
export function handleImds(
  method: string,
  path: string,
  query: URLSearchParams,
  metadataHeader: string | undefined,
  directory: EntraDirectory,
  authority: TokenAuthority,
  cloud: StandInCloud,
): ImdsAnswer {
  if (path !== TOKEN_PATH && path !== `${TOKEN_PATH}/`)
    return { status: 404, body: { error: 'not_found', error_description: 'Not found' }, operation: 'unknown' };
  if (method !== 'GET')
    return {
      status: 405,
      body: { error: 'invalid_request', error_description: 'Method not allowed' },
      operation: 'managedIdentityToken',
    };
  if (metadataHeader?.toLowerCase() !== 'true') return bad('Required metadata header not specified');
  if (query.get('api-version') === null) return bad("Required query variable 'api-version' is missing");
  const resource = query.get('resource');
  if (resource === null || resource === '') return bad('Required audience parameter not specified');
  const identity = selectIdentity(directory.managedIdentities(), query);
  if (typeof identity === 'string') return bad(identity);
  const known = [
    cloud.keyVaultResource,
    `${cloud.keyVaultResource}/`,
    cloud.managementResource,
    cloud.managementResource.replace(/\/$/, ''),
  ];
  if (!known.includes(resource)) {
    return bad(
      `AADSTS500011: The resource principal named ${resource} was not found in the tenant named ${identity.tenantId}.`,
      'invalid_resource',
    );
  }
  const issued = authority.issue(
    { tenantId: identity.tenantId, clientId: identity.clientId, objectId: identity.objectId, authMethod: '0' },
    resource,
    cloud,
  );
  return {
    status: 200,
    body: {
      access_token: issued.token,
      client_id: identity.clientId,
      expires_in: String(issued.expiresIn),
      expires_on: String(issued.expiresOn),
      ext_expires_in: String(issued.expiresIn),
      not_before: String(issued.notBefore),
      resource,
      token_type: 'Bearer',
    },
    operation: 'managedIdentityToken',
    principal: identity.clientId,
  };
}
