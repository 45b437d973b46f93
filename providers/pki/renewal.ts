// When a mounted certificate must be issued anew. Seed 004: renew when 80% of the
// validity has passed or less than 10 days remain, whichever comes first. Taken
// literally a certificate valid 10 days or less would be renewed on every rotation, so
// the 10-day point counts only when it falls after the validity's midpoint.
import { decodeSerialVersion } from './serial.js';

/** Seconds in 10 days. */
const TEN_DAYS_S = 10 * 24 * 3600;

/**
 * The renewal point (seconds since the epoch) of a certificate valid from `notBefore` to
 * `notAfter`: min(notBefore + 0.8·V, notAfter − 10 days) when notAfter − 10 days is later
 * than notBefore + V/2, else notBefore + 0.8·V. 24h → 19.2h; 15d → 12d; 30d → 20d; 1y → 292d.
 */
export function renewAt(notBefore: number, notAfter: number): number {
  const validity = notAfter - notBefore;
  const eighty = notBefore + Math.floor(validity * 0.8);
  const tenDaysLeft = notAfter - TEN_DAYS_S;
  return tenDaysLeft > notBefore + validity / 2 ? Math.min(eighty, tenDaysLeft) : eighty;
}

/** Object ids a pki Mount answers. */
export const OBJECT_IDS = Object.freeze({ cert: 'tls.crt', key: 'tls.key', bundle: 'ca.crt' });

/** Why a Mount issues a certificate; `keep` answers no files. */
export type RenewalDecision =
  'keep' | 'first' | 'rendering-changed' | 'unknown-version' | 'due' | 'signer-changed' | 'bundle-changed';

/** What the decision looks at. */
export interface RenewalInputs {
  /** The driver's current_object_version. */
  readonly current: ReadonlyMap<string, string>;
  /** Whether this target's last answer had the same rendering fingerprint. */
  readonly sameRendering: boolean;
  /** The tag (serial.ts) of the signer now. */
  readonly signerTag: string;
  /** The ca.crt version now (SHA-256 of the bundle). */
  readonly bundleVersion: string;
  /** Now, seconds since the epoch. */
  readonly now: number;
}

/**
 * Whether to keep the mounted certificate or issue a new one, and why. Keeping needs
 * tls.crt and tls.key mounted with one serial this provider wrote, not yet due, from the
 * same signer, with the same bundle and rendering: anything else issues anew (the provider
 * holds no key, so any answer with files carries a new certificate).
 */
export function renewalDecision(inputs: RenewalInputs): RenewalDecision {
  const cert = inputs.current.get(OBJECT_IDS.cert);
  if (cert === undefined) return 'first';
  if (!inputs.sameRendering) return 'rendering-changed';
  const facts = decodeSerialVersion(cert);
  if (facts === undefined || inputs.current.get(OBJECT_IDS.key) !== cert) return 'unknown-version';
  if (inputs.now >= renewAt(facts.notBefore, facts.notAfter) || inputs.now < facts.notBefore) return 'due';
  if (facts.signerTag !== inputs.signerTag) return 'signer-changed';
  if (inputs.current.get(OBJECT_IDS.bundle) !== inputs.bundleVersion) return 'bundle-changed';
  return 'keep';
}
