// The pki provider's own metric, next to the framework's provider_mount_*: what each
// Mount decided (renewal.ts). Labels are the fixed decision words, never a name.
import { Counter, Registry } from 'prom-client';
import type { RenewalDecision } from './renewal.js';

const DECISIONS: readonly RenewalDecision[] = [
  'keep',
  'first',
  'rendering-changed',
  'unknown-version',
  'due',
  'signer-changed',
  'bundle-changed',
];

/** Counters of the pki provider. */
export class PkiMetrics {
  private readonly decisions: Counter<'decision'>;

  /** Registers on `registry` (the provider's /metrics one; a fresh one keeps it private). */
  constructor(registry: Registry = new Registry()) {
    this.decisions = new Counter({
      name: 'pki_mount_decisions_total',
      help: 'Mounts by what they decided: keep (no files, the mounted certificate stays) or why a certificate was issued',
      labelNames: ['decision'],
      registers: [registry],
    });
    for (const decision of DECISIONS) this.decisions.inc({ decision }, 0);
  }

  /** One Mount decided `decision`. */
  decided(decision: RenewalDecision): void {
    this.decisions.inc({ decision });
  }
}
