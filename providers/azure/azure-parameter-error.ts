import { SscError } from '../../lib/errors.js';

/**
 * A bad SecretProviderClass parameter (or nodePublishSecretRef key) of the azure
 * provider: INVALID_ARGUMENT, reason `InvalidParameters` as for `file` and `vault`.
 * `message` names the parameter and never holds a value that could be secret.
 */
export function invalidParameter(message: string): SscError {
  return new SscError('invalid-argument', `azure provider: ${message}`, { reason: 'InvalidParameters' });
}
