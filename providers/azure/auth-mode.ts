// Which identity a Mount reads Key Vault as, from the class's parameters and its
// nodePublishSecretRef, as Azure's provider v1.8.2 decides it (provider.go
// buildAuthConfig, auth/auth.go NewConfig/GetCredential): VM managed identity when
// useVMManagedIdentity, else workload identity when clientID is set (the pod's token
// for api://AzureADTokenExchange), else a service principal from the secret's
// clientid/clientsecret keys (any case). Upstream silently ignores the losers of a
// mix (clientID beside useVMManagedIdentity, a secret beside clientID); here a mix is
// INVALID_ARGUMENT naming both, so a class means one identity.
import { checkTokenSubject } from '../framework/jwt-subject.js';
import { podInfoMissing, SERVICE_ACCOUNT_ATTRIBUTE } from '../framework/pod-info.js';
import { serviceAccountToken, type TokenRequester } from '../framework/sa-token.js';
import { quoted } from '../../lib/untrusted-text.js';
import { invalidParameter } from './azure-errors.js';

/** The identity of a Mount; secrets and tokens are only here, never in messages. */
export type AzureAuth =
  | { readonly kind: 'workload-identity'; readonly clientId: string; readonly token: string }
  | { readonly kind: 'service-principal'; readonly clientId: string; readonly clientSecret: string }
  | { readonly kind: 'managed-identity'; readonly userAssignedIdentityId: string | undefined };

/** The audience of the pod token workload identity exchanges (upstream DefaultTokenAudience). */
export const WORKLOAD_IDENTITY_AUDIENCE = 'api://AzureADTokenExchange';

/** How the azure provider is named in service-account token errors. */
export const AZURE_TOKEN_REQUESTER: TokenRequester = {
  provider: 'azure',
  audienceNote: 'workload identity (clientID) exchanges it for a Microsoft Entra token',
};

/** The parameters auth is resolved from (already trimmed). */
export interface AuthInput {
  readonly useVMManagedIdentity: boolean;
  readonly userAssignedIdentityId: string;
  readonly clientId: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly pod: { readonly namespace: string; readonly serviceAccountName: string | undefined };
}

/** A nodePublishSecretRef key matched case-insensitively (upstream getCredential: strings.ToLower(k)). */
function secretKey(
  secrets: Readonly<Record<string, string>>,
  name: 'clientid' | 'clientsecret',
): { key: string; value: string } | undefined {
  const keys = Object.keys(secrets).filter((k) => k.toLowerCase() === name);
  // Upstream takes whichever Go's map iteration yields last: random. Refused here.
  if (keys.length > 1)
    throw invalidParameter(
      `the nodePublishSecretRef Secret has ${keys.map((k) => quoted(k, 32)).join(' and ')}: keep one ${name} key`,
    );
  const key = keys[0];
  return key === undefined ? undefined : { key, value: secrets[key] as string };
}

/**
 * The one identity `input` names. Throws INVALID_ARGUMENT naming the conflicting or
 * missing settings; for workload identity FAILED_PRECONDITION when the pod's token is
 * missing (`ServiceAccountTokenMissing`) or another account's (`ServiceAccountTokenMismatch`).
 */
export function resolveAuth(input: AuthInput): AzureAuth {
  const id = secretKey(input.secrets, 'clientid');
  const secret = secretKey(input.secrets, 'clientsecret');
  const secretKeys = [id, secret]
    .filter((k) => k !== undefined)
    .map((k) => quoted(k.key, 32))
    .join(' and ');
  if (input.useVMManagedIdentity) {
    if (input.clientId !== '')
      throw invalidParameter(
        'useVMManagedIdentity and clientID are both set: clientID selects workload identity; for a ' +
          'user-assigned managed identity set userAssignedIdentityID instead',
      );
    if (secretKeys !== '')
      throw invalidParameter(
        `useVMManagedIdentity is set and the nodePublishSecretRef Secret has ${secretKeys}: a ` +
          `managed identity uses no client secret; remove nodePublishSecretRef or ` +
          `useVMManagedIdentity`,
      );
    return {
      kind: 'managed-identity',
      userAssignedIdentityId: input.userAssignedIdentityId === '' ? undefined : input.userAssignedIdentityId,
    };
  }
  if (input.userAssignedIdentityId !== '')
    throw invalidParameter(
      'userAssignedIdentityID is set without useVMManagedIdentity: "true" (it names the VM\'s user-assigned managed identity)',
    );
  if (input.clientId !== '') {
    if (secretKeys !== '')
      throw invalidParameter(
        `clientID is set and the nodePublishSecretRef Secret has ${secretKeys}: clientID selects workload identity; remove nodePublishSecretRef or clientID`,
      );
    const { serviceAccountName, namespace } = input.pod;
    if (serviceAccountName === undefined)
      throw podInfoMissing('azure', SERVICE_ACCOUNT_ATTRIBUTE, "workload identity is the pod's service account");
    const token = serviceAccountToken(input.attributes, WORKLOAD_IDENTITY_AUDIENCE, AZURE_TOKEN_REQUESTER);
    checkTokenSubject(token, namespace, serviceAccountName, 'azure');
    return { kind: 'workload-identity', clientId: input.clientId, token };
  }
  if (id === undefined && secret === undefined) {
    throw invalidParameter(
      'no identity: set clientID (workload identity), useVMManagedIdentity: "true" (managed ' +
        'identity), or a nodePublishSecretRef Secret with clientid and clientsecret (service ' +
        'principal)',
    );
  }
  if (id === undefined || id.value === '')
    throw invalidParameter("the nodePublishSecretRef Secret has no clientid (the service principal's application id)");
  if (secret === undefined || secret.value === '')
    throw invalidParameter("the nodePublishSecretRef Secret has no clientsecret (the service principal's secret)");
  return { kind: 'service-principal', clientId: id.value, clientSecret: secret.value };
}
