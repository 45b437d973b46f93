// The driver's Kubernetes API calls as RBAC rights: which calls each feature makes, and
// which role in deploy/ grants each right. One table serves two purposes: a 403 names
// the missing right and the file that grants it (api-errors.ts), and tests check that
// the roles in deploy/ grant exactly what the enabled features call.

/** An RBAC right: a verb on a resource (`serviceaccounts/token` for a subresource) of an API group ("" = core). */
export interface ApiRight {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  /** Only this object (RBAC resourceNames), for rights granted on one named object. */
  readonly name?: string;
}

/** A driver feature that makes API calls of its own. */
export type DriverFeature =
  'publish' | 'secret-sync' | 'rotation-reconciler' | 'rotation-republish' | 'workload-restart';

/** A ClusterRole shipped in deploy/: the feature it serves, its file and the rights it grants. */
export interface ShippedRole {
  readonly feature: DriverFeature;
  readonly file: string;
  readonly role: string;
  readonly rights: readonly ApiRight[];
}

const SECRETS_STORE = 'secrets-store.csi.x-k8s.io';

/**
 * Asking the API server what the driver may do (`kubectl auth can-i`): Kubernetes grants it
 * to every authenticated user (ClusterRole system:basic-user), so no role in deploy/ does.
 */
export const SELF_ACCESS_REVIEW: ApiRight = Object.freeze({
  verb: 'create',
  group: 'authorization.k8s.io',
  resource: 'selfsubjectaccessreviews',
});

/** Rights every authenticated user has (Kubernetes' default ClusterRole system:basic-user): no shipped role grants them. */
export const GRANTED_TO_EVERY_USER: readonly ApiRight[] = Object.freeze([SELF_ACCESS_REVIEW]);

function rights(group: string, resources: readonly string[], verbs: readonly string[], name?: string): ApiRight[] {
  return resources.flatMap((resource) =>
    verbs.map((verb) => ({ verb, group, resource, ...(name !== undefined ? { name } : {}) })),
  );
}

/**
 * The calls each feature makes, as rights (the KubeApi calls in driver/k8s/). The
 * audit-log test checks that a driver running each feature makes no other call.
 */
export const FEATURE_CALLS: Readonly<Record<DriverFeature, readonly ApiRight[]>> = Object.freeze({
  // NodePublishVolume in Kubernetes mode, whatever the flags: the class (list+watch
  // cache, GET on a miss), the pod (owner references), the pod status object (create,
  // or replace after 409, JSON patch on republish, delete after a failed first mount),
  // and events on the pod.
  publish: [
    ...rights(SECRETS_STORE, ['secretproviderclasses'], ['get', 'list', 'watch']),
    ...rights(SECRETS_STORE, ['secretproviderclasspodstatuses'], ['get', 'create', 'update', 'patch', 'delete']),
    ...rights('', ['pods'], ['get']),
    ...rights('', ['events'], ['create']),
  ],
  // Secret sync (on unless --enable-secret-sync=false): Secrets labelled used=true (synced
  // ones carry it) listed and watched in the namespaces with synced volumes on this node, a
  // Secret read by name (a retry, or before the watch has listed), created, replaced,
  // patched (owner references and the driver's labels added); the re-sync lists this
  // node's pod statuses (from the reconciler's watch when it runs) and reads their pods.
  'secret-sync': [
    ...rights('', ['secrets'], ['get', 'list', 'watch', 'create', 'update', 'patch']),
    ...rights(SECRETS_STORE, ['secretproviderclasspodstatuses'], ['list']),
  ],
  // --enable-secret-rotation with --rotation-mode=reconciler: this node's pod statuses and
  // pods (list+watch), tokens for the CSIDriver's tokenRequests, nodePublishSecretRef data;
  // at start (auto or reconciler) whether it may make those calls (SelfSubjectAccessReviews).
  'rotation-reconciler': [
    SELF_ACCESS_REVIEW,
    ...rights(SECRETS_STORE, ['secretproviderclasspodstatuses'], ['list', 'watch']),
    ...rights('', ['pods'], ['list', 'watch']),
    ...rights('', ['serviceaccounts/token'], ['create']),
    ...rights('storage.k8s.io', ['csidrivers'], ['get'], 'secrets-store.csi.k8s.io'),
    ...rights('', ['secrets'], ['get', 'list', 'watch']),
  ],
  // --enable-secret-rotation with --rotation-mode=republish: the CSIDriver, read once at
  // start to check requiresRepublish (and, chosen by auto, the reconciler's rights asked
  // at start). Tokens and Secret data come from kubelet.
  'rotation-republish': [
    SELF_ACCESS_REVIEW,
    ...rights('storage.k8s.io', ['csidrivers'], ['get'], 'secrets-store.csi.k8s.io'),
  ],
  // The restart-on-rotation class annotation (rotation on, either mode).
  'workload-restart': [
    ...rights('apps', ['replicasets'], ['get']),
    ...rights('apps', ['deployments', 'statefulsets', 'daemonsets'], ['get', 'patch']),
  ],
});

/** The ClusterRoles in deploy/ that the driver's ServiceAccount is bound to (a unit test compares them with the files). */
export const SHIPPED_ROLES: readonly ShippedRole[] = Object.freeze([
  {
    feature: 'publish',
    file: 'deploy/rbac.yaml',
    role: 'secretproviderclasses-role',
    rights: [
      ...rights('', ['events'], ['create', 'patch']),
      ...rights('', ['pods'], ['get', 'list', 'watch']),
      ...rights(SECRETS_STORE, ['secretproviderclasses'], ['get', 'list', 'watch']),
      ...rights(
        SECRETS_STORE,
        ['secretproviderclasspodstatuses'],
        ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      ),
      ...rights('storage.k8s.io', ['csidrivers'], ['get'], 'secrets-store.csi.k8s.io'),
    ],
  },
  {
    feature: 'secret-sync',
    file: 'deploy/rbac-secret-sync.yaml',
    role: 'secretprovidersyncing-role',
    rights: rights('', ['secrets'], ['get', 'list', 'watch', 'create', 'update', 'patch']),
  },
  {
    feature: 'rotation-reconciler',
    file: 'deploy/rbac-rotation.yaml',
    role: 'secretproviderrotation-role',
    rights: [
      ...rights('', ['serviceaccounts/token'], ['create']),
      ...rights('', ['secrets'], ['get', 'list', 'watch']),
    ],
  },
  {
    feature: 'workload-restart',
    file: 'deploy/rbac-workload-restart.yaml',
    role: 'secretproviderrestart-role',
    rights: FEATURE_CALLS['workload-restart'],
  },
]);

/**
 * Rights the shipped roles grant although no feature calls them, each with its reason
 * (the base role keeps upstream's rules where they match).
 */
export const GRANTED_BEYOND_CALLS: readonly { readonly right: ApiRight; readonly why: string }[] = Object.freeze([
  {
    right: { verb: 'patch', group: '', resource: 'events' },
    why: "upstream's secretproviderclasses-role grants it (its event broadcaster patches repeated events); the driver creates a new event each time",
  },
  {
    right: { verb: 'get', group: 'storage.k8s.io', resource: 'csidrivers', name: 'secrets-store.csi.k8s.io' },
    why: "in the base role as upstream's (get only); only rotation reads the CSIDriver",
  },
  {
    right: { verb: 'list', group: '', resource: 'pods' },
    why: "in the base role as upstream's; only the rotation reconciler lists pods",
  },
  {
    right: { verb: 'watch', group: '', resource: 'pods' },
    why: "in the base role as upstream's; only the rotation reconciler watches pods",
  },
  {
    right: { verb: 'list', group: SECRETS_STORE, resource: 'secretproviderclasspodstatuses' },
    why: "in the base role as upstream's; only the rotation reconciler and the Secret re-sync list pod statuses",
  },
  {
    right: { verb: 'watch', group: SECRETS_STORE, resource: 'secretproviderclasspodstatuses' },
    why: "in the base role as upstream's; only the rotation reconciler watches pod statuses",
  },
]);

/** The settings that decide which features run (a subset of DriverConfig). */
export interface FeatureSettings {
  readonly enableSecretSync: boolean;
  readonly enableSecretRotation: boolean;
  readonly rotationMode: 'auto' | 'reconciler' | 'republish';
}

/**
 * The features a Kubernetes-mode driver with these settings runs (workload restart is a
 * per-class opt-in, not a flag). `auto` counts as the reconciler: what it runs when the
 * reconciler's rights are granted (deploy/'s roles); without them it runs republish mode.
 */
export function featuresOf(settings: FeatureSettings): DriverFeature[] {
  const features: DriverFeature[] = ['publish'];
  if (settings.enableSecretSync) features.push('secret-sync');
  if (settings.enableSecretRotation)
    features.push(settings.rotationMode === 'republish' ? 'rotation-republish' : 'rotation-reconciler');
  return features;
}

/** A right as RBAC and kubectl write it: `create serviceaccounts/token` (with `in API group "apps"` unless core). */
export function describeRight(right: ApiRight): string {
  return `${right.verb} ${right.resource}${right.name !== undefined ? ` "${right.name}"` : ''}${right.group === '' ? '' : ` in API group "${right.group}"`}`;
}

/** True when `granted` covers `wanted` (same verb, group and resource; a named grant covers that object only). */
export function covers(granted: ApiRight, wanted: ApiRight): boolean {
  return (
    granted.verb === wanted.verb &&
    granted.group === wanted.group &&
    granted.resource === wanted.resource &&
    (granted.name === undefined || granted.name === wanted.name)
  );
}

/** The shipped roles that grant `right`; the role of `preferred` first when it is one of them. */
export function rolesGranting(right: ApiRight, preferred?: DriverFeature): ShippedRole[] {
  const found = SHIPPED_ROLES.filter((r) => r.rights.some((g) => covers(g, right)));
  const first = found.filter((r) => r.feature === preferred);
  return first.length > 0 ? first : found;
}

const VERB_OF_METHOD: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/**
 * The right a request needs, from its method and REST path (query ignored), as the API
 * server's authorizer derives it: GET of an object is get, of a collection list (watch
 * with `watch`), DELETE of a collection deletecollection. Undefined for a path that is
 * not a resource path.
 */
export function rightOfRequest(method: string, path: string, watch = false): ApiRight | undefined {
  const parts = (path.split('?')[0] ?? '')
    .split('/')
    .filter(Boolean)
    .map((p) => decodeURIComponent(p));
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] ?? '';
    rest = parts.slice(3);
  } else return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, subresource] = rest;
  if (resource === undefined || rest.length > 3) return undefined;
  const full = subresource !== undefined ? `${resource}/${subresource}` : resource;
  const m = method.toUpperCase();
  let verb: string | undefined;
  if (m === 'GET' || m === 'WATCH') verb = watch || m === 'WATCH' ? 'watch' : name === undefined ? 'list' : 'get';
  else if (m === 'DELETE') verb = name === undefined ? 'deletecollection' : 'delete';
  else verb = VERB_OF_METHOD[m];
  if (verb === undefined) return undefined;
  return { verb, group, resource: full, ...(name !== undefined ? { name } : {}) };
}
