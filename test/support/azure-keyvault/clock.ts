// Stand-in for Azure Key Vault / Microsoft Entra ID time (test only; no real peer can run
// here, see docs/conformance.md). Key Vault reports `created`/`updated` as Unix seconds and
// Entra checks token lifetimes; tests drive both with a clock they can advance.

/** The stand-in's notion of now, in milliseconds since the epoch. */
export interface StandInClock {
  now(): number;
}

/** A clock that only moves when the test calls `advance`. */
export class ManualClock implements StandInClock {
  constructor(private ms: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.ms;
  }
  /** Moves time forward by `seconds` (Key Vault timestamps have one-second resolution). */
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/** The real wall clock. */
export const systemClock: StandInClock = { now: () => Date.now() };

/** Unix seconds of `clock` (Key Vault's `created`, `updated`, JWT `iat`/`exp`). */
export function unixSeconds(clock: StandInClock): number {
  return Math.floor(clock.now() / 1000);
}
