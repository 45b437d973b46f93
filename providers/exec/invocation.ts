// What a helper is called with: argv (never a shell), a clean environment, and the
// values its stderr must never show. Pure functions, table-tested.
import { SscError } from '../../lib/errors.js';
import {
  POD_NAME_ATTRIBUTE,
  POD_NAMESPACE_ATTRIBUTE,
  podInfoMissing,
  SERVICE_ACCOUNT_ATTRIBUTE,
} from '../framework/pod-info.js';
import { TOKENS_ATTRIBUTE } from '../framework/sa-token.js';
import type { ExecObject } from './parameters.js';
import { parameterVariable } from './parameters.js';

/** The only PATH a helper gets: no directory of the provider's own environment. */
export const HELPER_PATH = '/usr/local/bin:/usr/bin:/bin';
/** The variable holding the pod's tokens JSON when the class opts in. */
export const TOKENS_VARIABLE = 'SSC_SERVICE_ACCOUNT_TOKENS';

/** The pod a Mount is for, from the volume context (podInfoOnMount). */
export interface PodIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly serviceAccount: string;
}

const POD_ATTRIBUTES = [
  ['namespace', POD_NAMESPACE_ATTRIBUTE],
  ['name', POD_NAME_ATTRIBUTE],
  ['serviceAccount', SERVICE_ACCOUNT_ATTRIBUTE],
] as const;

/**
 * The pod's namespace, name and service account. Throws FAILED_PRECONDITION
 * (`PodInfoMissing`) naming the attribute when one is missing (the CSIDriver needs
 * podInfoOnMount: true), INVALID_ARGUMENT for a NUL, which argv cannot carry.
 */
export function podIdentity(attributes: Readonly<Record<string, string>>): PodIdentity {
  const out: Record<string, string> = {};
  for (const [key, attribute] of POD_ATTRIBUTES) {
    const value = attributes[attribute] ?? '';
    if (value === '')
      throw podInfoMissing('exec', attribute, "helpers are called with the pod's namespace, name and service account");
    if (value.includes('\0'))
      throw new SscError('invalid-argument', `exec provider: ${attribute} holds a NUL character`, {
        reason: 'InvalidMountRequest',
      });
    out[key] = value;
  }
  return out as unknown as PodIdentity;
}

/** A helper's subcommand: `get` prints the content, `version` the object's version. */
export type HelperOperation = 'get' | 'version';

/** `<operation> <objectName> <pod namespace> <pod name> <service account>`, each one argv entry as is. */
export function helperArguments(operation: HelperOperation, object: ExecObject, pod: PodIdentity): string[] {
  return [operation, object.objectName, pod.namespace, pod.name, pod.serviceAccount];
}

/**
 * The helper's whole environment: PATH, HOME=/nonexistent, LANG=C.UTF-8, one
 * SSC_PARAM_* per parameter, and the tokens JSON only when `tokens` is given (the
 * class opted in). Nothing of the provider's own environment.
 */
export function helperEnvironment(object: ExecObject, tokens: string | undefined): Record<string, string> {
  const env: Record<string, string> = { PATH: HELPER_PATH, HOME: '/nonexistent', LANG: 'C.UTF-8' };
  for (const [name, value] of object.parameters) env[parameterVariable(name)] = value;
  if (tokens !== undefined) env[TOKENS_VARIABLE] = tokens;
  return env;
}

/**
 * The pod's tokens JSON to pass, when the class opted in. Throws FAILED_PRECONDITION
 * (`ServiceAccountTokenMissing`) when it opted in and the driver passed none.
 */
export function tokensToPass(attributes: Readonly<Record<string, string>>, optedIn: boolean): string | undefined {
  if (!optedIn) return undefined;
  const raw = attributes[TOKENS_ATTRIBUTE];
  if (raw === undefined || raw === '') {
    throw new SscError(
      'failed-precondition',
      `exec provider: passServiceAccountTokens is "true" but the driver passed no ` +
        `${TOKENS_ATTRIBUTE}: add the audiences the helpers need to the CSIDriver's ` +
        `spec.tokenRequests`,
      { reason: 'ServiceAccountTokenMissing' },
    );
  }
  if (raw.includes('\0'))
    throw new SscError('invalid-argument', `exec provider: ${TOKENS_ATTRIBUTE} holds a NUL character`, {
      reason: 'InvalidMountRequest',
    });
  return raw;
}

/**
 * Every value a helper's stderr must not show: the object's parameter values, the
 * nodePublishSecretRef values, and the tokens (the JSON and each token in it). Empty
 * strings are left out; longest first, so a value containing another is hidden whole.
 */
export function secretValues(
  object: ExecObject,
  secrets: Readonly<Record<string, string>>,
  tokens: string | undefined,
): string[] {
  const values = new Set<string>();
  for (const [, value] of object.parameters) values.add(value);
  for (const value of Object.values(secrets)) values.add(value);
  if (tokens !== undefined) {
    values.add(tokens);
    try {
      const parsed = JSON.parse(tokens) as unknown;
      if (typeof parsed === 'object' && parsed !== null) {
        for (const entry of Object.values(parsed as Record<string, unknown>)) {
          const token = typeof entry === 'object' && entry !== null ? (entry as { token?: unknown }).token : undefined;
          if (typeof token === 'string') values.add(token);
        }
      }
    } catch {
      // Not JSON: the whole text is hidden, which is all there is.
    }
  }
  values.delete('');
  return [...values].sort((a, b) => b.length - a.length);
}
