import type { MountRequest } from '../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../lib/errors.js';
import { mountAttributes } from '../driver/publish/mount-request.js';
import type { MintedToken, TokenSpec } from '../driver/k8s/token-requests.js';

/** Where upstream's controller says the files would go: no file is written, the path only satisfies providers. */
export const SYNC_TARGET_PATH = '/mnt/secrets-store';
/** File mode 0644 as the JSON number upstream sends. */
const PERMISSION = '420';

/** The controller's own pod, passed as the "pod" of every Mount (upstream's downward-API variables). */
export interface ControllerPod {
  readonly name: string;
  readonly uid: string;
}

/** What a Mount for one SecretSync needs. */
export interface SyncMountInput {
  readonly parameters: Readonly<Record<string, string>>;
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly pod: ControllerPod;
  /** The `csi.storage.k8s.io/serviceAccount.tokens` JSON; undefined when no audience is configured. */
  readonly tokens: string | undefined;
}

/**
 * The Mount request as upstream's controller builds it: the class parameters, then the
 * controller pod's name and uid, the SecretSync's namespace and service account, then the
 * tokens; no secrets, no current object versions.
 */
export function syncMountRequest(input: SyncMountInput): MountRequest {
  const podContext = {
    'csi.storage.k8s.io/pod.name': input.pod.name,
    'csi.storage.k8s.io/pod.uid': input.pod.uid,
    'csi.storage.k8s.io/pod.namespace': input.namespace,
    'csi.storage.k8s.io/serviceAccount.name': input.serviceAccount,
  };
  return {
    attributes: JSON.stringify(mountAttributes(input.parameters, podContext, input.tokens)),
    secrets: '{}',
    target_path: SYNC_TARGET_PATH,
    permission: PERMISSION,
    current_object_version: [],
  };
}

/** The tokens JSON for `audiences` (each minted for `serviceAccount`), or undefined when there are none. */
export async function tokensJson(
  mint: (spec: TokenSpec) => Promise<MintedToken>,
  namespace: string,
  serviceAccount: string,
  audiences: readonly string[],
  expirationSeconds: number,
): Promise<string | undefined> {
  if (audiences.length === 0) return undefined;
  const out: Record<string, MintedToken> = {};
  for (const audience of audiences) {
    const t = await mint({ namespace, serviceAccount, audience, expirationSeconds });
    out[audience] = { token: t.token, expirationTimestamp: t.expirationTimestamp };
  }
  return JSON.stringify(out);
}

/** The files of a Mount response by path; a response carrying an error code is the provider's failure. */
export function responseFiles(provider: string, res: MountResponse__Output): Map<string, Buffer> {
  if (res.error?.code)
    throw new SscError('failed-precondition', `provider "${provider}" Mount failed with error code ${res.error.code}`);
  const files = new Map<string, Buffer>();
  for (const f of res.files) files.set(f.path, f.contents);
  return files;
}
