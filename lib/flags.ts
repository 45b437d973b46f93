/** A flag's declared type. */
export type FlagType = 'string' | 'boolean';

/** A flag a command accepts. */
export interface FlagSpec {
  readonly type: FlagType;
  readonly default?: string | boolean;
  /** Accepted for compatibility with upstream manifests, then ignored with a warning. */
  readonly ignored?: boolean;
  /** One line for --help and docs. */
  readonly help: string;
}

/** Result of parsing argv against a table of FlagSpecs. */
export interface ParsedFlags {
  readonly values: Readonly<Record<string, string | boolean>>;
  readonly positionals: readonly string[];
  /** Names of ignored compatibility flags that were given, each once, in order. */
  readonly ignoredGiven: readonly string[];
  /** Names of every flag given on the command line (not defaulted), each once. */
  readonly given: ReadonlySet<string>;
}

// Go's strconv.ParseBool, which the flag package uses: exactly these spellings.
const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = {
  '1': true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

/** A word read as Go's strconv.ParseBool reads it; undefined when Go would refuse it. */
export function parseGoBool(word: string): boolean | undefined {
  return Object.hasOwn(BOOLEAN_WORDS, word) ? BOOLEAN_WORDS[word] : undefined;
}

/**
 * Parses Go-flag-style arguments, as upstream's manifests pass them: `--name=value`,
 * `--name value`, `-name=value`, `-name value`, boolean `-name`, `--name` or
 * `--name=false` (never `--name false`, as in Go). Unknown flags are errors that name
 * the flag. Values that were not given take their spec's default.
 */
export function parseFlags(argv: readonly string[], specs: Readonly<Record<string, FlagSpec>>): ParsedFlags {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const ignoredGiven = new Set<string>();
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const spec = specs[name];
    if (!spec) throw new Error(`unknown flag --${name}`);
    let value: string | boolean;
    if (spec.type === 'boolean') {
      if (eq < 0) value = true;
      else {
        const word = parseGoBool(body.slice(eq + 1));
        if (word === undefined) throw new Error(`flag --${name} takes true or false, got "${body.slice(eq + 1)}"`);
        value = word;
      }
    } else if (eq >= 0) value = body.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new Error(`flag --${name} needs a value`);
      value = next;
      i++;
    }
    given.add(name);
    if (spec.ignored) ignoredGiven.add(name);
    else values[name] = value;
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (!(name in values) && spec.default !== undefined && !spec.ignored) values[name] = spec.default;
  }
  return { values, positionals, ignoredGiven: [...ignoredGiven], given };
}

/** Reads a string flag from parsed values ('' when absent). */
export function stringFlag(flags: ParsedFlags, name: string): string {
  const v = flags.values[name];
  return typeof v === 'string' ? v : '';
}

/** Reads a boolean flag from parsed values (false when absent). */
export function booleanFlag(flags: ParsedFlags, name: string): boolean {
  return flags.values[name] === true;
}

/** `--help` text for a spec table. */
export function flagsHelp(specs: Readonly<Record<string, FlagSpec>>): string {
  return Object.entries(specs)
    .filter(([, s]) => !s.ignored)
    .map(([name, s]) => {
      const value = s.type === 'string' ? '=VALUE' : '';
      const byDefault = s.default !== undefined && s.default !== '' ? ` (default ${String(s.default)})` : '';
      return `  --${name}${value}\n      ${s.help}${byDefault}`;
    })
    .join('\n');
}

/** A whole-number flag value from `min` to `max` (digits only). Throws an Error naming `--name`. */
export function parseWholeNumberFlag(name: string, raw: string, min: number, max: number): number {
  const n = /^[0-9]{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(n >= min && n <= max)) throw new Error(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}
