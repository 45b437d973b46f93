// Which rotation mode runs (docs/rotation.md#which-mode-runs): --rotation-mode=auto (the
// default) takes the reconciler when the driver's RBAC grants what it calls, and kubelet's
// republish otherwise, so a driver under upstream's roles and Helm values rotates without
// a failure event per volume per interval. An explicit mode is always honoured.
import type { RotationMode } from '../config.js';
import {
  covers,
  describeRight,
  FEATURE_CALLS,
  rolesGranting,
  SELF_ACCESS_REVIEW,
  type ApiRight,
} from '../k8s/api-rights.js';
import type { CsiDriver } from '../k8s/client/types.js';

/** What the driver found out at start. */
export interface RotationModeFacts {
  readonly requested: RotationMode;
  readonly driverName: string;
  /** The CSIDriver object (undefined: there is none; `unreadable`: the read failed). */
  readonly csiDriver: CsiDriver | undefined | 'unreadable';
  /** The reconciler's rights the API server said the driver lacks; `unknown` when it could not be asked. */
  readonly missing: readonly ApiRight[] | 'unknown';
}

/** The mode that runs, and the one line to log about it (none when nothing is amiss). */
export interface RotationModeChoice {
  readonly mode: 'reconciler' | 'republish';
  readonly log?: { readonly level: 'warn' | 'error'; readonly message: string };
}

const TOKEN_CREATE: ApiRight = { verb: 'create', group: '', resource: 'serviceaccounts/token' };

/**
 * The reconciler's calls that the driver can check at start: its token requests only when
 * the CSIDriver has tokenRequests (or could not be read), since it mints none otherwise;
 * the CSIDriver read by this driver's name.
 */
export function reconcilerRights(csiDriver: RotationModeFacts['csiDriver'], driverName: string): ApiRight[] {
  const tokens = csiDriver === 'unreadable' || (csiDriver?.spec?.tokenRequests ?? []).length > 0;
  return FEATURE_CALLS['rotation-reconciler']
    .filter((r) => !covers(SELF_ACCESS_REVIEW, r) && (tokens || !covers(TOKEN_CREATE, r)))
    .map((r) => (r.resource === 'csidrivers' ? { ...r, name: driverName } : r));
}

/** `create serviceaccounts/token (ClusterRole … in deploy/…)`, for each right. */
function describeMissing(missing: readonly ApiRight[]): string {
  return missing
    .map((right) => {
      const roles = rolesGranting(right, 'rotation-reconciler');
      const where = roles.map((r) => `ClusterRole ${r.role} in ${r.file}`).join(' or ');
      return `${describeRight(right)}${where === '' ? '' : ` (${where})`}`;
    })
    .join(', ');
}

function requiresRepublish(csiDriver: RotationModeFacts['csiDriver']): boolean {
  return csiDriver !== 'unreadable' && csiDriver?.spec?.requiresRepublish === true;
}

/**
 * Decides the mode. auto: the reconciler when nothing it calls is missing (or the rights
 * could not be checked: the mode of earlier versions); else kubelet's republish when the
 * CSIDriver has requiresRepublish: true or the missing right is the token request (then
 * every refresh of the reconciler would fail), else the reconciler with a warning.
 * reconciler and republish: honoured; missing rights logged as an error.
 */
export function chooseRotationMode(facts: RotationModeFacts): RotationModeChoice {
  const { requested, missing, csiDriver, driverName } = facts;
  if (requested === 'republish') return { mode: 'republish' };
  if (missing === 'unknown')
    return {
      mode: 'reconciler',
      log: {
        level: 'warn',
        message: `rotation: could not ask the API server for the rotation reconciler's rights; running the reconciler (--rotation-mode=${requested})`,
      },
    };
  if (missing.length === 0) return { mode: 'reconciler' };
  const lacks = `the driver's RBAC lacks: ${describeMissing(missing)}`;
  if (requested === 'reconciler')
    return {
      mode: 'reconciler',
      log: {
        level: 'error',
        message:
          `--rotation-mode=reconciler: ${lacks}; refreshes that need it fail with ` +
          `MountRotationFailed. Grant it, or use --rotation-mode=auto or republish with CSIDriver ` +
          `requiresRepublish: true`,
      },
    };
  const republish = requiresRepublish(csiDriver);
  if (!republish && !missing.some((r) => covers(r, TOKEN_CREATE)))
    return {
      mode: 'reconciler',
      log: {
        level: 'warn',
        message:
          `rotation: ${lacks}; running the rotation reconciler (--rotation-mode=auto) since CSIDriver ` +
          `${driverName} has no requiresRepublish: true, and refreshes that need it fail with ` +
          `MountRotationFailed`,
      },
    };
  const why = republish
    ? `CSIDriver ${driverName} has requiresRepublish: true`
    : `CSIDriver ${driverName} has no requiresRepublish: true, so kubelet does not republish and ` +
      `mounted volumes are not rotated until it is set or the right granted`;
  return {
    mode: 'republish',
    log: {
      level: 'warn',
      message: `rotation: ${lacks}; rotating on kubelet's republish instead of the rotation reconciler (--rotation-mode=auto chose republish): ${why}`,
    },
  };
}
