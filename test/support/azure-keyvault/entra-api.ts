// Stand-in for Microsoft Entra ID's v2.0 endpoints (test only; no real Entra can run here,
// see docs/conformance.md): OpenID configuration, instance discovery (what msal-node asks
// of a known authority), the signing keys, and the token endpoint for the client credentials
// grant with a client secret or a workload identity client assertion (RFC 7523 jwt-bearer,
// verified as a federated identity credential: signature by the registered issuer's keys,
// iss, sub, aud, nbf/exp). Follows the Microsoft identity platform OAuth 2.0
// client-credentials and workload identity federation references.
import type { StandInCloud } from './clouds.js';
import { type StandInClock, unixSeconds } from './clock.js';
import { TOKEN_EXCHANGE_AUDIENCE, type EntraDirectory, type AppRegistration } from './entra-directory.js';
import { AADSTS, entraError, type EntraErrorReply } from './entra-errors.js';
import { decodeJwt, numericClaim, verifyJwtSignature } from './jwt.js';
import type { TokenAuthority } from './token-authority.js';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const OIDC_SCOPES = new Set(['openid', 'profile', 'offline_access']);

/** What the Entra handler needs. */
export interface EntraContext {
  readonly directory: EntraDirectory;
  readonly authority: TokenAuthority;
  readonly clock: StandInClock;
}

/** An Entra answer plus what the request log records. */
export interface EntraAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly operation: string;
  readonly principal?: string;
}

type Failure = readonly [number, string, number, string];

/** Routes one request to a login host of `cloud`. */
export function handleEntra(
  method: string,
  path: string,
  query: URLSearchParams,
  body: Buffer,
  cloud: StandInCloud,
  ctx: EntraContext,
): EntraAnswer {
  const segs = path.split('/').slice(1);
  const err = (f: Failure, operation: string): EntraAnswer => {
    const e: EntraErrorReply = entraError(f[0], f[1], f[2], f[3], cloud.loginHost, ctx.clock.now());
    return { status: e.status, body: e.body, operation };
  };
  if (method === 'GET' && path === '/common/discovery/instance')
    return { status: 200, body: instanceDiscovery(cloud, query), operation: 'instanceDiscovery' };
  const tenant = segs[0] ?? '';
  const known = ctx.directory.hasTenant(tenant) || ['common', 'organizations'].includes(tenant);
  const rest = segs.slice(1).join('/');
  if (method === 'GET' && rest === 'v2.0/.well-known/openid-configuration') {
    if (!known)
      return {
        status: 400,
        body: {
          error: 'invalid_tenant',
          error_description: entraError(
            400,
            'invalid_tenant',
            90002,
            AADSTS.unknownTenant(tenant)[3],
            cloud.loginHost,
            ctx.clock.now(),
          ).body['error_description'],
        },
        operation: 'openidConfiguration',
      };
    return { status: 200, body: openidConfiguration(cloud, tenant), operation: 'openidConfiguration' };
  }
  if (method === 'GET' && rest === 'discovery/v2.0/keys') {
    const jwk = ctx.authority.publicJwk();
    return {
      status: 200,
      body: { keys: [{ kty: 'RSA', use: 'sig', kid: ctx.authority.kid, n: jwk.n, e: jwk.e }] },
      operation: 'keys',
    };
  }
  if (method === 'POST' && rest === 'oauth2/v2.0/token') {
    if (!ctx.directory.hasTenant(tenant)) return err(AADSTS.unknownTenant(tenant), 'token');
    return token(new URLSearchParams(body.toString('utf8')), tenant, cloud, ctx, err);
  }
  return {
    status: 404,
    body: { error: 'not_found', error_description: `${method} ${path} is not an Entra endpoint this stand-in serves` },
    operation: 'unknown',
  };
}

function instanceDiscovery(cloud: StandInCloud, query: URLSearchParams): unknown {
  const endpoint = query.get('authorization_endpoint') ?? `https://${cloud.loginHost}/common/oauth2/v2.0/authorize`;
  const tenant = new URL(endpoint).pathname.split('/')[1] ?? 'common';
  return {
    tenant_discovery_endpoint: `https://${cloud.loginHost}/${tenant}/v2.0/.well-known/openid-configuration`,
    'api-version': '1.1',
    metadata: [{ preferred_network: cloud.loginHost, preferred_cache: cloud.loginHost, aliases: [cloud.loginHost] }],
  };
}

function openidConfiguration(cloud: StandInCloud, tenant: string): unknown {
  const base = `https://${cloud.loginHost}/${tenant}`;
  return {
    token_endpoint: `${base}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
    jwks_uri: `https://${cloud.loginHost}/${tenant}/discovery/v2.0/keys`,
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    issuer: `https://${cloud.loginHost}/${tenant === 'common' || tenant === 'organizations' ? '{tenantid}' : tenant}/v2.0`,
    request_uri_parameter_supported: false,
    authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
    device_authorization_endpoint: `${base}/oauth2/v2.0/devicecode`,
    http_logout_supported: true,
    frontchannel_logout_supported: true,
    end_session_endpoint: `${base}/oauth2/v2.0/logout`,
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'tid', 'oid'],
    tenant_region_scope: 'NA',
    cloud_instance_name:
      cloud.loginHost === 'login.microsoftonline.com' ? 'microsoftonline.com' : cloud.loginHost.replace(/^login\./, ''),
  };
}

/** The resource a client-credentials `scope` names (`<resource>/.default`), or why not. */
export function scopeResource(scope: string): { resource: string } | { invalid: string } {
  const scopes = scope.split(' ').filter((s) => s !== '' && !OIDC_SCOPES.has(s));
  const only = scopes[0];
  if (scopes.length !== 1 || only === undefined || !only.endsWith('/.default')) return { invalid: scopes.join(' ') };
  return { resource: only.slice(0, -'/.default'.length) };
}

function token(
  form: URLSearchParams,
  tenant: string,
  cloud: StandInCloud,
  ctx: EntraContext,
  err: (f: Failure, op: string) => EntraAnswer,
): EntraAnswer {
  const grant = form.get('grant_type');
  if (grant === null) return err(AADSTS.missing('grant_type'), 'token');
  if (grant !== 'client_credentials') return err(AADSTS.grant(grant), 'token');
  const clientId = form.get('client_id');
  if (clientId === null || clientId === '') return err(AADSTS.missing('client_id'), 'token');
  const scope = form.get('scope');
  if (scope === null) return err(AADSTS.missing('scope'), 'token');
  const parsed = scopeResource(scope);
  if ('invalid' in parsed) return err(AADSTS.scope(parsed.invalid), 'token');
  if (
    ![cloud.keyVaultResource, cloud.managementResource, cloud.managementResource.replace(/\/$/, '')].includes(
      parsed.resource,
    )
  ) {
    return err(AADSTS.resource(parsed.resource, tenant), 'token');
  }
  const app = ctx.directory.app(tenant, clientId);
  if (app === undefined) return err(AADSTS.unknownApp(clientId, tenant), 'token');
  const secret = form.get('client_secret');
  const assertionType = form.get('client_assertion_type');
  let method: '1' | '2';
  if (secret !== null) {
    if (!app.secrets.has(secret)) return err(AADSTS.badSecret(clientId), 'token');
    method = '1';
  } else if (assertionType !== null || form.get('client_assertion') !== null) {
    if (assertionType !== JWT_BEARER) return err(AADSTS.assertionType(assertionType ?? ''), 'token');
    const problem = checkAssertion(form.get('client_assertion') ?? '', app, ctx);
    if (problem !== undefined) return err(problem, 'token');
    method = '2';
  } else {
    return err(AADSTS.noCredential(), 'token');
  }
  const issued = ctx.authority.issue(
    { tenantId: tenant, clientId, objectId: app.objectId, authMethod: method },
    parsed.resource,
    cloud,
  );
  return {
    status: 200,
    body: {
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      ext_expires_in: issued.expiresIn,
      access_token: issued.token,
    },
    operation: 'token',
    principal: clientId,
  };
}

function iso(seconds: number | undefined): string {
  return seconds === undefined ? '(none)' : new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Verifies a workload identity assertion against the app's federated identity credentials. */
function checkAssertion(assertion: string, app: AppRegistration, ctx: EntraContext): Failure | undefined {
  const jwt = decodeJwt(assertion);
  if (jwt === undefined) return AADSTS.malformedAssertion();
  const iss = String(jwt.claims['iss'] ?? '');
  const sub = String(jwt.claims['sub'] ?? '');
  const audClaim = jwt.claims['aud'];
  const auds = Array.isArray(audClaim) ? audClaim.map(String) : [String(audClaim ?? '')];
  const byIssuer = app.federated.filter((f) => f.issuer === iss);
  if (byIssuer.length === 0) return AADSTS.noIssuerRecord(iss);
  if (!byIssuer.some((f) => f.keys.some((k) => verifyJwtSignature(jwt, k)))) return AADSTS.badSignature();
  const now = unixSeconds(ctx.clock);
  const exp = numericClaim(jwt.claims, 'exp');
  const nbf = numericClaim(jwt.claims, 'nbf');
  if (exp === undefined || now > exp + 300 || (nbf !== undefined && now + 300 < nbf))
    return AADSTS.timeRange(iso(now), iso(nbf), iso(exp));
  if (!byIssuer.some((f) => f.subject === sub && auds.includes(f.audience)))
    return AADSTS.noRecord(iss, sub, auds.join(','));
  return undefined;
}

export { TOKEN_EXCHANGE_AUDIENCE };
