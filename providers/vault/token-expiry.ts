// When a Vault token from a login is used again and when the provider logs in anew.

/** A token from a login, with what Vault said about its lifetime. */
export interface VaultToken {
  /** The client token. Never logged. */
  readonly clientToken: string;
  /** When the login answered (ms since the epoch). */
  readonly obtainedAtMs: number;
  /** auth.lease_duration in seconds; 0 means the token does not expire. */
  readonly leaseSeconds: number;
}

/** Part of a token's lifetime after which it is replaced: it always has a third left when used. */
export const REFRESH_FRACTION = 2 / 3;

/**
 * Whether `token` must be replaced by a new login before a request at `nowMs` that may
 * take up to `requestMs`: when there is none, or it would be past two thirds of its
 * lifetime before the request ends. We log in anew instead of renewing:
 * a renewal cannot pass the role's max TTL, and a login is one request too.
 */
export function tokenNeedsLogin(token: VaultToken | undefined, nowMs: number, requestMs: number): boolean {
  if (token === undefined) return true;
  if (token.leaseSeconds <= 0) return false;
  const lifetimeMs = token.leaseSeconds * 1000;
  return nowMs + requestMs >= token.obtainedAtMs + lifetimeMs * REFRESH_FRACTION;
}
