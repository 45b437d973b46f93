import { SscError } from '../../lib/errors.js';
import { parseGoBool } from '../../lib/flags.js';
import { quoted } from '../../lib/untrusted-text.js';
import { describeNode, goString, NOT_A_SCALAR } from './go-yaml.js';

/** Makes the errors of a bad SecretProviderClass parameter, for one provider. */
export type InvalidParameter = (message: string) => SscError;

/**
 * The error of a bad SecretProviderClass parameter (or nodePublishSecretRef key) of the
 * provider named `provider`: INVALID_ARGUMENT, reason `InvalidParameters`, every provider
 * alike. Messages name the parameter and never hold a value that could be secret.
 */
export function invalidParameterOf(provider: string): InvalidParameter {
  return (message) =>
    new SscError('invalid-argument', `${provider} provider: ${message}`, { reason: 'InvalidParameters' });
}

/** A field of entry `index` of a list parameter, named for messages: `objects[1] ("db-pass").secretKey`. */
export function fieldName(list: string, index: number, objectName: string | undefined, field: string): string {
  return `${list}[${index}]${objectName === undefined ? '' : ` (${quoted(objectName, 64)})`}.${field}`;
}

/** A string field as yaml.v3 fills a Go string: any scalar's text, '' when absent; any other node is `invalid`. */
export function goStringField(node: unknown, name: string, invalid: InvalidParameter): string {
  const value = goString(node);
  if (value === NOT_A_SCALAR) throw invalid(`${name} must be a string, not ${describeNode(node)}`);
  return value ?? '';
}

/**
 * A set boolean parameter `name` read with Go's strconv.ParseBool (`true`, `1`, `T`, …), as
 * upstream providers read theirs; any other text is `invalid`. Unset or empty is the caller's to decide.
 */
export function goBoolParameter(text: string, name: string, invalid: InvalidParameter): boolean {
  const value = parseGoBool(text);
  if (value === undefined) throw invalid(`${name} must be "true" or "false", not ${quoted(text, 16)}`);
  return value;
}
