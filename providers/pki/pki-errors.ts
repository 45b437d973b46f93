// The pki provider's errors: SscErrors whose reason is the metric `error_type` (listed
// in docs/metrics.md). Messages name the parameter or the nodePublishSecretRef key and
// never quote key material or a whole certificate.
import { SscError } from '../../lib/errors.js';
import { invalidParameterOf } from '../framework/parameter-errors.js';

/** A bad SecretProviderClass parameter of the pki provider (providers/framework/parameter-errors.ts). */
export const invalidParameter = invalidParameterOf('pki');

/** A template names pod information the Mount lacks (the CSIDriver needs podInfoOnMount: true). */
export function podInfoMissing(message: string): SscError {
  return new SscError('failed-precondition', `pki provider: ${message}`, { reason: 'PodInfoMissing' });
}

/** The nodePublishSecretRef lacks `ca.crt` or `ca.key`. */
export function caMissing(message: string): SscError {
  return new SscError('failed-precondition', `pki provider: ${message}`, { reason: 'CaMissing' });
}

/** `ca.crt` or `ca.key` is unusable: not PEM, no certificate, an encrypted or unsupported key, no certificate for the key, not a CA. */
export function caInvalid(message: string): SscError {
  return new SscError('failed-precondition', `pki provider: ${message}`, { reason: 'CaInvalid' });
}

/** The signing CA certificate is expired or not valid yet. */
export function caExpired(message: string): SscError {
  return new SscError('failed-precondition', `pki provider: ${message}`, { reason: 'CaExpired' });
}
