/** Milliseconds per Go duration unit. */
const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
});

/**
 * Parses a Go `time.ParseDuration` string ("2m", "1h30m", "1.5s", "300ms", "-1m", "0")
 * into milliseconds. Throws an Error naming the bad input; the caller adds the flag name.
 */
export function parseGoDuration(input: string): number {
  const s = input.trim();
  if (s === '') throw new Error('empty duration');
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new Error(`invalid duration "${input}"`);
  let total = 0;
  const part = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest.length > 0) {
    const m = part.exec(rest);
    if (!m) {
      const bad = /^(\d+(?:\.\d*)?|\.\d+)([^\d.]*)/.exec(rest);
      if (bad && bad[2] === '') throw new Error(`missing unit in duration "${input}"`);
      if (bad) throw new Error(`unknown unit "${bad[2]}" in duration "${input}"`);
      throw new Error(`invalid duration "${input}"`);
    }
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** Formats milliseconds the way Go prints durations ("2m0s", "1h30m0s", "500ms"). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/** Limits of a duration flag, each with the words its error message uses ("1s", "1h"). */
export interface DurationFlagBounds {
  /** Examples for the syntax hint, e.g. "2m or 1h30m". */
  readonly example: string;
  /** Refuses zero and less with "must be greater than zero". */
  readonly positive?: boolean;
  readonly min?: readonly [ms: number, words: string];
  readonly max?: readonly [ms: number, words: string];
}

/**
 * A Go-duration flag value in whole milliseconds, within `bounds`. Throws an Error
 * naming `--name` and the value: one wording for every flag of every process.
 */
export function parseDurationFlag(name: string, raw: string, bounds: DurationFlagBounds): number {
  let ms: number;
  try {
    ms = parseGoDuration(raw);
  } catch (err) {
    throw new Error(`--${name}: ${(err as Error).message} (use Go duration syntax such as ${bounds.example})`, {
      cause: err,
    });
  }
  if (bounds.positive && !(ms > 0)) throw new Error(`--${name} must be greater than zero, got "${raw}"`);
  const { min, max } = bounds;
  if ((min && ms < min[0]) || (max && ms > max[0])) {
    const range =
      min && max ? `between ${min[1]} and ${max[1]}` : min ? `at least ${min[1]}` : `at most ${max?.[1] ?? ''}`;
    throw new Error(`--${name} must be ${range}, got "${raw}"`);
  }
  return Math.floor(ms);
}
