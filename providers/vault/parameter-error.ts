import { SscError } from '../../lib/errors.js';

/**
 * A bad SecretProviderClass parameter of the vault provider: INVALID_ARGUMENT, reason
 * `InvalidParameters` (the `file` provider's reason for the same thing). `message` names
 * the parameter and never holds a value that could be secret.
 */
export function invalidParameter(message: string): SscError {
  return new SscError('invalid-argument', `vault provider: ${message}`, { reason: 'InvalidParameters' });
}
