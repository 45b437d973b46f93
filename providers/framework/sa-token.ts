// The pod's service-account token a provider logs in with (Vault's Kubernetes or JWT
// auth, Azure workload identity). kubelet mints it for the audiences listed in the
// CSIDriver's `tokenRequests` and the driver passes them
// in the `csi.storage.k8s.io/serviceAccount.tokens` attribute as
// {"<audience>": {"token": "...", "expirationTimestamp": "..."}}. The provider requests
// no tokens itself (so it needs no RBAC); a missing audience is a configuration error.
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';

/** The attribute the driver fills with the pod's tokens (upstream's name). */
export const TOKENS_ATTRIBUTE = 'csi.storage.k8s.io/serviceAccount.tokens';

/**
 * Who asks for a token, for messages: `provider` starts them (`<provider> provider: …`),
 * `audienceNote` says where the audience comes from (vault: "the class's audience
 * parameter picks it"), in parentheses after the fix; none when undefined.
 */
export interface TokenRequester {
  readonly provider: string;
  readonly audienceNote?: string | undefined;
}

function missing(who: TokenRequester, audience: string, why: string): SscError {
  const note = who.audienceNote === undefined ? '' : ` (${who.audienceNote})`;
  return new SscError(
    'failed-precondition',
    `${who.provider} provider: ${why}: add {audience: ${quoted(audience, 64)}} to the CSIDriver's spec.tokenRequests${note}`,
    { reason: 'ServiceAccountTokenMissing' },
  );
}

/**
 * The pod's token for `audience` from the Mount's attributes. Throws FAILED_PRECONDITION
 * naming the audience when the driver passed none for it; never echoes a token.
 */
export function serviceAccountToken(
  attributes: Readonly<Record<string, string>>,
  audience: string,
  who: TokenRequester,
): string {
  const raw = attributes[TOKENS_ATTRIBUTE];
  if (raw === undefined || raw === '')
    throw missing(
      who,
      audience,
      `no service-account token for audience ${quoted(audience, 64)} (the driver passed no ${TOKENS_ATTRIBUTE})`,
    );
  let tokens: unknown;
  try {
    tokens = JSON.parse(raw);
  } catch {
    throw new SscError('invalid-argument', `${who.provider} provider: ${TOKENS_ATTRIBUTE} is not valid JSON`, {
      reason: 'InvalidMountRequest',
    });
  }
  const entry =
    typeof tokens === 'object' && tokens !== null && Object.hasOwn(tokens, audience)
      ? (tokens as Record<string, unknown>)[audience]
      : undefined;
  const token = typeof entry === 'object' && entry !== null ? (entry as { token?: unknown }).token : undefined;
  if (typeof token !== 'string' || token === '') {
    const have =
      typeof tokens === 'object' && tokens !== null
        ? Object.keys(tokens)
            .slice(0, 8)
            .map((a) => quoted(a, 64))
            .join(', ')
        : '';
    throw missing(
      who,
      audience,
      `no service-account token for audience ${quoted(audience, 64)} (the driver passed ${have === '' ? 'none' : `only ${have}`})`,
    );
  }
  return token;
}
