// Stand-in for Microsoft Entra ID's token-endpoint errors (test only; no real Entra can run
// here, see docs/conformance.md). Body shape of the v2.0 endpoint: `error`,
// `error_description` ("AADSTSnnn: … Trace ID … Correlation ID … Timestamp …"), `error_codes`,
// `timestamp`, `trace_id`, `correlation_id`, `error_uri`. Codes and texts as the real service
// words them in public reports (AADSTS7000215, 700016, 90002, 70021, 700211, 700024, 500011,
// 900144, 1002012); AADSTS700027's status and the 7000218 text are unverified.
import { randomUUID } from 'node:crypto';

/** An Entra error answer. */
export interface EntraErrorReply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function timestamp(nowMs: number): string {
  return new Date(nowMs)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Builds the error body for `AADSTS<code>`. */
export function entraError(
  status: number,
  error: string,
  code: number,
  message: string,
  loginHost: string,
  nowMs: number,
): EntraErrorReply {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const ts = timestamp(nowMs);
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${message} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${ts}`,
      error_codes: [code],
      timestamp: ts,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://${loginHost}/error?code=${code}`,
    },
  };
}

/** The error texts, by case. */
export const AADSTS = {
  unknownTenant: (t: string) =>
    [
      400,
      'invalid_request',
      90002,
      `Tenant '${t}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`,
    ] as const,
  unknownApp: (c: string, t: string) =>
    [
      400,
      'unauthorized_client',
      700016,
      `Application with identifier '${c}' was not found in the directory '${t}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
    ] as const,
  badSecret: (c: string) =>
    [
      401,
      'invalid_client',
      7000215,
      `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${c}'.`,
    ] as const,
  noCredential: () =>
    [
      401,
      'invalid_client',
      7000218,
      `The request body must contain the following parameter: 'client_assertion' or 'client_secret'.`,
    ] as const,
  missing: (p: string) =>
    [400, 'invalid_request', 900144, `The request body must contain the following parameter: '${p}'.`] as const,
  grant: (g: string) =>
    [400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${g}'.`] as const,
  scope: (s: string) =>
    [
      400,
      'invalid_scope',
      1002012,
      `The provided value for scope ${s} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
    ] as const,
  resource: (r: string, t: string) =>
    [
      400,
      'invalid_resource',
      500011,
      `The resource principal named ${r} was not found in the tenant named ${t}. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`,
    ] as const,
  assertionType: (t: string) =>
    [
      400,
      'invalid_request',
      50027,
      `Invalid client_assertion_type '${t}'; expected 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'.`,
    ] as const,
  malformedAssertion: () => [400, 'invalid_request', 50027, 'JWT token is invalid or malformed.'] as const,
  noIssuerRecord: (iss: string) =>
    [
      400,
      'invalid_client',
      700211,
      `No matching federated identity record found for presented assertion issuer '${iss}'. Please check your federated identity credential Subject, Audience and Issuer against the presented assertion. https://docs.microsoft.com/en-us/azure/active-directory/develop/workload-identity-federation`,
    ] as const,
  noRecord: (iss: string, sub: string, aud: string) =>
    [
      400,
      'invalid_request',
      70021,
      `No matching federated identity record found for presented assertion. Assertion Issuer: '${iss}'. Assertion Subject: '${sub}'. Assertion Audience: '${aud}'. https://docs.microsoft.com/en-us/azure/active-directory/develop/workload-identity-federation`,
    ] as const,
  badSignature: () => [401, 'invalid_client', 700027, 'Client assertion failed signature validation.'] as const,
  timeRange: (now: string, nbf: string, exp: string) =>
    [
      400,
      'invalid_client',
      700024,
      `Client assertion is not within its valid time range. Current time: ${now}, assertion valid from ${nbf}, expiry time of assertion ${exp}. Review the documentation at https://docs.microsoft.com/azure/active-directory/develop/active-directory-certificate-credentials .`,
    ] as const,
};
