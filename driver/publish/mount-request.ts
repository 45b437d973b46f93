import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { ObjectVersion } from '../volume/payload.js';

/** volume_context / secrets key carrying the pod's service-account tokens. */
export const SERVICE_ACCOUNT_TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';

/** Everything the driver knows that goes into a provider Mount call. */
export interface MountInput {
  /** SecretProviderClass spec.parameters. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly volumeContext: Readonly<Record<string, string>>;
  /** NodePublishVolumeRequest.secrets: the nodePublishSecretRef data (and maybe tokens). */
  readonly secrets: Readonly<Record<string, string>>;
  readonly targetPath: string;
  /** Default file mode, e.g. 0o644. */
  readonly defaultMode: number;
  readonly currentVersions: readonly ObjectVersion[];
}

/**
 * Prefix of the volume_context keys kubelet owns (pod info, ephemeral flag, service-account
 * tokens). A SecretProviderClass parameter under it is never forwarded: it would let a class
 * author speak for kubelet, e.g. hand a provider a token of their choosing.
 */
export const KUBELET_KEY_PREFIX = 'csi.storage.k8s.io/';

/** The class parameter keys buildMountRequest drops because kubelet owns them, sorted. */
export function kubeletOwnedParameters(parameters: Readonly<Record<string, string>>): string[] {
  return Object.keys(parameters)
    .filter((key) => key.startsWith(KUBELET_KEY_PREFIX))
    .sort();
}

/**
 * The provider's attributes, lowest precedence first: class parameters (minus kubelet-owned
 * keys), then volume_context, then tokens delivered in `secrets` (kubelet 1.35+ with
 * `serviceAccountTokenInSecrets`, or minted by the driver for rotation), as upstream v1.6.1
 * lets the secrets' tokens beat volume_context's.
 */
export function mountAttributes(
  parameters: Readonly<Record<string, string>>,
  volumeContext: Readonly<Record<string, string>>,
  secretsTokens: string | undefined,
): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(parameters))
    if (!key.startsWith(KUBELET_KEY_PREFIX)) attributes[key] = value;
  Object.assign(attributes, volumeContext);
  if (secretsTokens !== undefined) attributes[SERVICE_ACCOUNT_TOKENS_KEY] = secretsTokens;
  return attributes;
}

/**
 * Builds the v1alpha1 MountRequest: attributes from mountAttributes; service-account
 * tokens delivered in `secrets` move into attributes where every provider looks for them;
 * permission is a JSON number.
 */
export function buildMountRequest(input: MountInput): MountRequest {
  const { [SERVICE_ACCOUNT_TOKENS_KEY]: tokens, ...secrets } = input.secrets;
  const attributes = mountAttributes(input.parameters, input.volumeContext, tokens);
  return {
    attributes: JSON.stringify(attributes),
    secrets: JSON.stringify(secrets),
    target_path: input.targetPath,
    permission: String(input.defaultMode),
    current_object_version: input.currentVersions.map((v) => ({ id: v.id, version: v.version })),
  };
}
