import type { SecretSync } from './secret-sync.js';

/**
 * The poll group of a SecretSync: those with the same namespace, class and service account
 * make the same Mount request (the audiences are the controller's), so they poll together
 * and one Mount can answer them all. Names cannot hold "/" or a newline.
 */
export function pollGroupOf(ss: SecretSync): string {
  return [ss.metadata?.namespace ?? '', ss.spec?.secretProviderClassName ?? '', ss.spec?.serviceAccountName ?? ''].join(
    '\n',
  );
}
