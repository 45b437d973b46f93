import type { Logger } from '../../lib/logging/logger.js';
import type { DriverConfig, RotationMode } from '../config.js';
import { mayI } from '../k8s/access-review.js';
import type { ApiRight } from '../k8s/api-rights.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import { readCsiDriver } from '../k8s/service-account-tokens.js';
import { chooseRotationMode, reconcilerRights, type RotationModeFacts } from '../rotation/mode-choice.js';

/** Longest the start-up check may hold the driver's start (an unreachable API server): then the reconciler runs. */
const CHECK_TIMEOUT_MS = 10_000;

async function facts(api: KubeApi, config: DriverConfig): Promise<RotationModeFacts> {
  const csiDriver = await readCsiDriver(api, config.driverName).catch(() => 'unreadable' as const);
  const rights = reconcilerRights(csiDriver, config.driverName);
  const granted = await Promise.all(rights.map((r) => mayI(api, r)));
  return {
    requested: config.rotationMode,
    driverName: config.driverName,
    csiDriver,
    missing: rights.filter((_, i) => !granted[i]),
  };
}

async function withinDeadline(check: Promise<RotationModeFacts>, config: DriverConfig): Promise<RotationModeFacts> {
  let timer: NodeJS.Timeout | undefined;
  const unknown: RotationModeFacts = {
    requested: config.rotationMode,
    driverName: config.driverName,
    csiDriver: 'unreadable',
    missing: 'unknown',
  };
  const deadline = new Promise<RotationModeFacts>((resolve) => {
    timer = setTimeout(() => resolve(unknown), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check.catch(() => unknown), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The rotation mode this driver runs, decided at start (rotation/mode-choice.ts): with
 * rotation on and a mode other than republish, reads the CSIDriver and asks the API server
 * (SelfSubjectAccessReviews) whether the reconciler's calls are allowed, and logs once
 * what is missing and which mode runs. Rotation off or republish asked: no API call.
 */
export async function resolveRotationMode(api: KubeApi, config: DriverConfig, logger: Logger): Promise<RotationMode> {
  if (!config.enableSecretRotation || config.rotationMode === 'republish') return config.rotationMode;
  const found = await withinDeadline(facts(api, config), config);
  const choice = chooseRotationMode(found);
  const missing = found.missing === 'unknown' ? undefined : found.missing.map(key);
  if (choice.log) logger[choice.log.level](choice.log.message, { mode: choice.mode, missing });
  logger.info('rotation mode', { requested: config.rotationMode, mode: choice.mode });
  return choice.mode;
}

function key(right: ApiRight): string {
  return `${right.verb} ${right.group === '' ? '' : `${right.group}/`}${right.resource}`;
}
