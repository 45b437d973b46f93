// Keys for what the provider remembers between Vault calls: which request an object
// makes (so objects of one Mount that make the same request share one response, and
// pods of one identity share one read) and which configuration produced a file (so a
// held lease is found again only by the object it was issued for). Keys hold paths and
// parameters, never secrets; they are compared, never logged.
import type { VaultObject } from './objects.js';
import { stableJson } from './stable-json.js';

/**
 * The Vault request `object` makes: equal for two objects exactly when they send the
 * same method, path, KV version, query and body. A GET sends no body (Vault reads none),
 * so `secretArgs` does not count there.
 */
export function requestKey(object: VaultObject): string {
  return stableJson({
    method: object.method,
    path: object.path,
    version: object.version ?? null,
    query: object.query,
    body: object.method === 'GET' ? null : (object.secretArgs ?? null),
  });
}

/**
 * The configuration of `object` that its version covers (render.ts, objectVersion):
 * a held lease is keyed by it, so an edited object never gets the files of its former
 * configuration.
 */
export function objectConfigKey(object: VaultObject): string {
  return stableJson({
    objectName: object.objectName,
    secretPath: object.secretPath,
    secretKey: object.secretKey ?? null,
    method: object.method,
    secretArgs: object.secretArgs ?? null,
    filePermission: object.filePermission ?? null,
    encoding: object.encoding,
  });
}

/** Objects of one Mount that make the same Vault request, in the order they were listed. */
export interface RequestGroup {
  readonly requestKey: string;
  readonly objects: readonly VaultObject[];
}

/**
 * `objects` grouped by the request they make. One response serves a whole group, so
 * `dbUsername` and `dbPassword` read from `database/creds/app` come from the same
 * credentials (HashiCorp's provider shares responses within a Mount likewise, keyed by
 * secretPath and method only; here the body counts too, so different `secretArgs` are
 * different requests).
 */
export function groupByRequest(objects: readonly VaultObject[]): RequestGroup[] {
  const groups = new Map<string, VaultObject[]>();
  for (const object of objects) {
    const key = requestKey(object);
    const group = groups.get(key);
    if (group) group.push(object);
    else groups.set(key, [object]);
  }
  return [...groups].map(([key, list]) => ({ requestKey: key, objects: list }));
}
