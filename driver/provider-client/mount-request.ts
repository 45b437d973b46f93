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
 * Builds the v1alpha1 MountRequest (SPEC 3.2): attributes = parameters overlaid with
 * volume_context; service-account tokens delivered in `secrets` (newer kubelets) move
 * into attributes where every provider looks for them; permission is a JSON number.
 */
export function buildMountRequest(input: MountInput): MountRequest {
  const secrets: Record<string, string> = { ...input.secrets };
  const attributes: Record<string, string> = { ...input.parameters, ...input.volumeContext };
  const tokens = secrets[SERVICE_ACCOUNT_TOKENS_KEY];
  if (tokens !== undefined) {
    delete secrets[SERVICE_ACCOUNT_TOKENS_KEY];
    attributes[SERVICE_ACCOUNT_TOKENS_KEY] ??= tokens;
  }
  return {
    attributes: JSON.stringify(attributes),
    secrets: JSON.stringify(secrets),
    target_path: input.targetPath,
    permission: String(input.defaultMode),
    current_object_version: input.currentVersions.map((v) => ({ id: v.id, version: v.version })),
  };
}
