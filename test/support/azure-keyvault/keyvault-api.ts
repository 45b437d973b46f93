// Stand-in for the Azure Key Vault data-plane REST API 7.6 (test only; no real Key Vault or
// emulator can run here, see docs/conformance.md). Follows the Key Vault REST reference:
// GET {vault}/secrets|keys|certificates/{name}[/{version}], GET …/{name}/versions (paged:
// maxresults 1–25, default 25, `nextLink`), PUT /secrets/{name} (set), PATCH
// /secrets|keys|certificates/{name}/{version} (update attributes), GET /secrets|keys|certificates
// (list). Order of checks: api-version, bearer token, access policy, object, enabled.
import { authorizeKeyVault, type AuthorizedCaller } from './keyvault-auth.js';
import type { StandInCloud } from './clouds.js';
import {
  accessDenied,
  badApiVersion,
  badParameter,
  disabled,
  type KeyVaultErrorReply,
  noSuchOperation,
  notFound,
} from './keyvault-errors.js';
import { certificateBundle, certificateItem, keyBundle, keyItem, secretBundle, secretItem } from './keyvault-json.js';
import type { TokenAuthority } from './token-authority.js';
import type { ObjectKind, VaultStore } from './vault-store.js';
import { unixSeconds, type StandInClock } from './clock.js';

/** The api-version every answer is shaped for. */
export const LATEST_API_VERSION = '7.6';
const API_VERSIONS = new Set(['7.0', '7.1', '7.2', '7.3', '7.4', '7.5', '7.6']);
const KINDS = new Set<string>(['secrets', 'keys', 'certificates']);
const NAME = /^[0-9A-Za-z-]{1,127}$/;
/** Region Key Vault names in AccessDenied messages. */
export const VAULT_LOCATION = 'eastus';

/** A parsed Key Vault request. */
export interface KeyVaultRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
  readonly body: Buffer;
}

/** The answer plus what the request log records. */
export interface KeyVaultAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
  readonly operation: string;
  readonly principal?: string;
}

/** What a handler needs besides the request. */
export interface KeyVaultContext {
  readonly vault: VaultStore;
  readonly cloud: StandInCloud;
  readonly authority: TokenAuthority;
  readonly clock: StandInClock;
}

const CAP: Record<ObjectKind, string> = { secrets: 'Secret', keys: 'Key', certificates: 'Certificate' };

function isError(x: unknown): x is KeyVaultErrorReply {
  return typeof x === 'object' && x !== null && 'status' in x && 'body' in x;
}

function fail(e: KeyVaultErrorReply, operation: string, caller?: AuthorizedCaller): KeyVaultAnswer {
  return {
    status: e.status,
    body: e.body,
    ...(e.headers ? { headers: e.headers } : {}),
    operation,
    ...(caller ? { principal: caller.principal.clientId } : {}),
  };
}

/** Routes, checks and answers one Key Vault request. */
export function handleKeyVault(req: KeyVaultRequest, ctx: KeyVaultContext): KeyVaultAnswer {
  const segs = req.path.replace(/\/$/, '').split('/').slice(1);
  const kind = segs[0] ?? '';
  const [name, third] = [segs[1], segs[2]];
  const operation = operationName(req.method, kind, segs);
  const apiVersion = req.query.get('api-version') ?? undefined;
  if (apiVersion === undefined || !API_VERSIONS.has(apiVersion))
    return fail(badApiVersion(apiVersion, LATEST_API_VERSION), operation);
  const caller = authorizeKeyVault(req.authorization, ctx.authority, ctx.cloud, ctx.vault.tenantId);
  if (isError(caller)) return fail(caller, operation);
  if (!KINDS.has(kind) || segs.length > 3) return fail(noSuchOperation(404, req.method, req.path), operation, caller);
  const k = kind as ObjectKind;
  if (name !== undefined && !NAME.test(name))
    return fail(badParameter(`The request URI contains an invalid name: ${name}`), operation, caller);
  const permission =
    req.method === 'PUT'
      ? 'set'
      : req.method === 'PATCH'
        ? 'update'
        : name === undefined || third === 'versions'
          ? 'list'
          : 'get';
  if (!ctx.vault.allows(caller.principal.objectId, k, permission)) {
    return fail(accessDenied(caller.description, k, permission, ctx.vault.name, VAULT_LOCATION), operation, caller);
  }
  const answer = route(req, ctx, k, segs);
  return isError(answer)
    ? fail(answer, operation, caller)
    : { status: 200, body: answer, operation, principal: caller.principal.clientId };
}

/** `getSecret`, `getSecretVersions`, `setSecret`, `updateKey`, … for the request log. */
export function operationName(method: string, kind: string, segs: readonly string[]): string {
  const noun = CAP[kind as ObjectKind] ?? 'Unknown';
  if (segs.length === 1) return `get${noun}s`;
  if (segs[2] === 'versions') return `get${noun}Versions`;
  return method === 'PUT' ? `set${noun}` : method === 'PATCH' ? `update${noun}` : `get${noun}`;
}

function route(req: KeyVaultRequest, ctx: KeyVaultContext, kind: ObjectKind, segs: readonly string[]): unknown {
  const [, name, third] = segs;
  if (name === undefined)
    return req.method === 'GET' ? listObjects(req, ctx, kind) : noSuchOperation(405, req.method, req.path);
  if (third === 'versions')
    return req.method === 'GET' ? listVersions(req, ctx, kind, name) : noSuchOperation(405, req.method, req.path);
  if (req.method === 'PUT' && third === undefined && kind === 'secrets') return setSecret(req, ctx, name);
  if (req.method === 'PATCH' && third !== undefined) return update(req, ctx, kind, name, third);
  if (req.method !== 'GET') return noSuchOperation(405, req.method, req.path);
  return getObject(ctx, kind, name, third);
}

function findVersion(ctx: KeyVaultContext, kind: ObjectKind, name: string, version: string | undefined) {
  const versions = ctx.vault.versions(kind, name);
  if (versions === undefined) return notFound(kind, name);
  const v = version === undefined ? versions.at(-1) : versions.find((x) => x.version === version.toLowerCase());
  return v ?? notFound(kind, `${name}/${version ?? ''}`);
}

function getObject(ctx: KeyVaultContext, kind: ObjectKind, name: string, version: string | undefined): unknown {
  const v = findVersion(ctx, kind, name, version);
  if (isError(v)) return v;
  if (!v.attributes.enabled && kind !== 'certificates') return disabled(kind, 'get');
  const { vault } = ctx;
  if (kind === 'secrets') return secretBundle(vault, name, v as never);
  if (kind === 'keys') return keyBundle(vault, name, v as never);
  return certificateBundle(vault, name, v as never);
}

function pageSize(req: KeyVaultRequest): number | KeyVaultErrorReply {
  const text = req.query.get('maxresults');
  if (text === null) return 25;
  const n = Number(text);
  return /^[0-9]+$/.test(text) && n >= 1 && n <= 25
    ? n
    : badParameter(`Invalid value ${text} for parameter maxresults. The value must be between 1 and 25.`);
}

function page(req: KeyVaultRequest, ctx: KeyVaultContext, listPath: string, items: readonly unknown[]): unknown {
  const size = pageSize(req);
  if (isError(size)) return size;
  const token = req.query.get('$skiptoken');
  let start = 0;
  if (token !== null) {
    try {
      start = Number((JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { NextMarker: string }).NextMarker);
    } catch {
      start = NaN;
    }
    if (!Number.isInteger(start) || start < 0) return badParameter('The $skiptoken parameter is invalid.');
  }
  const slice = items.slice(start, start + size);
  const next = start + size;
  if (next >= items.length) return { value: slice, nextLink: null };
  const skip = Buffer.from(JSON.stringify({ NextMarker: String(next) })).toString('base64');
  const q = new URLSearchParams({
    'api-version': req.query.get('api-version') ?? LATEST_API_VERSION,
    $skiptoken: skip,
  });
  if (req.query.get('maxresults') !== null) q.set('maxresults', String(size));
  return { value: slice, nextLink: `https://${ctx.vault.host}:443${listPath}?${q.toString()}` };
}

function item(ctx: KeyVaultContext, kind: ObjectKind, name: string, v: never, versioned: boolean): unknown {
  if (kind === 'secrets') return secretItem(ctx.vault, name, v, versioned);
  if (kind === 'keys') return keyItem(ctx.vault, name, v, versioned);
  return certificateItem(ctx.vault, name, v, versioned);
}

function listVersions(req: KeyVaultRequest, ctx: KeyVaultContext, kind: ObjectKind, name: string): unknown {
  const versions = ctx.vault.versions(kind, name);
  if (versions === undefined) return notFound(kind, name);
  // Key Vault does not list versions in creation order (they come sorted by id).
  const sorted = [...versions].sort((a, b) => (a.version < b.version ? -1 : 1));
  return page(
    req,
    ctx,
    `/${kind}/${name}/versions`,
    sorted.map((v) => item(ctx, kind, name, v as never, true)),
  );
}

function listObjects(req: KeyVaultRequest, ctx: KeyVaultContext, kind: ObjectKind): unknown {
  const names = ctx.vault.names(kind).sort();
  return page(
    req,
    ctx,
    `/${kind}`,
    names.map((n) => item(ctx, kind, n, ctx.vault.versions(kind, n)?.at(-1) as never, false)),
  );
}

function jsonBody(req: KeyVaultRequest): Record<string, unknown> | KeyVaultErrorReply {
  try {
    const parsed = JSON.parse(req.body.toString('utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return badParameter('The request body is not a valid JSON object.');
}

function setSecret(req: KeyVaultRequest, ctx: KeyVaultContext, name: string): unknown {
  const body = jsonBody(req);
  if (isError(body)) return body;
  if (typeof body['value'] !== 'string') return badParameter('Property value is required.');
  const attrs = body['attributes'] as { enabled?: unknown } | undefined;
  ctx.vault.setSecret(name, body['value'], {
    ...(typeof body['contentType'] === 'string' ? { contentType: body['contentType'] } : {}),
    ...(typeof body['tags'] === 'object' && body['tags'] !== null
      ? { tags: body['tags'] as Record<string, string> }
      : {}),
    ...(typeof attrs?.enabled === 'boolean' ? { enabled: attrs.enabled } : {}),
  });
  return secretBundle(ctx.vault, name, ctx.vault.versions('secrets', name)?.at(-1) as never);
}

function update(req: KeyVaultRequest, ctx: KeyVaultContext, kind: ObjectKind, name: string, version: string): unknown {
  const body = jsonBody(req);
  if (isError(body)) return body;
  const v = findVersion(ctx, kind, name, version);
  if (isError(v)) return v;
  const enabled = (body['attributes'] as { enabled?: unknown } | undefined)?.enabled;
  if (typeof enabled === 'boolean') ctx.vault.setEnabled(kind, name, enabled, v.version);
  if (typeof body['tags'] === 'object' && body['tags'] !== null) v.tags = body['tags'] as Record<string, string>;
  if (kind === 'secrets' && typeof body['contentType'] === 'string')
    (v as { contentType: string | undefined }).contentType = body['contentType'];
  v.attributes.updated = unixSeconds(ctx.clock);
  if (kind === 'secrets') return secretBundle(ctx.vault, name, v as never, false);
  if (kind === 'keys') return keyBundle(ctx.vault, name, v as never);
  return certificateBundle(ctx.vault, name, v as never);
}
