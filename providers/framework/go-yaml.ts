// Go providers decode `objects` with gopkg.in/yaml.v3 into typed fields (HashiCorp's
// internal/config/config.go, Azure's pkg/provider/types). Checked against yaml.v3
// v3.0.1 (resolve.go, decode.go):
// - a string field takes any scalar's text as written: `objectName: 0600` is "0600",
//   `secretKey: true` is "true"; `~`/`null` leave it empty;
// - an integer field (filePermission, an os.FileMode) takes a plain scalar that
//   resolves to a number: underscores dropped, then Go's strconv.ParseInt with base 0
//   (`0600` and `0o600` octal, `0x1a4` hex, `0b…` binary, `420` decimal), or a float
//   with an integral value; a quoted string is a type error there;
// - a map of interface{} (secretArgs) keeps strings quoted or not, and resolves plain
//   scalars to null, true/false (only those spellings: `yes` stays a string), integers as
//   above, and floats.
// The `yaml` package parses the document; these functions read its scalars the Go way,
// so a class written for a Go provider means the same here.
import { isAlias, isMap, isScalar, isSeq, parseDocument, type Document, type Scalar } from 'yaml';

/** yaml.v3's null spellings (plain scalars only). */
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
/** yaml.v3's boolean spellings when decoding into interface{} (YAML 1.2 core). */
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['true', true],
  ['True', true],
  ['TRUE', true],
  ['false', false],
  ['False', false],
  ['FALSE', false],
]);
/** yaml.v3's yamlStyleFloat. */
const FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** Most values one goValue call builds, aliases expanded. */
export const MAX_VALUES = 10_000;
/** Go's strconv.ParseInt base-0 syntax (after yaml.v3 dropped the underscores). */
const GO_INTEGER = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;

/** True for a scalar written without quotes or block style, whose text Go resolves. */
function isPlain(node: Scalar): boolean {
  return node.type === 'PLAIN' && node.tag === undefined;
}

/** The scalar's text as written (plain) or its value (quoted, block, tagged). */
function scalarText(node: Scalar): string {
  if (isPlain(node)) return node.source ?? String(node.value);
  return typeof node.value === 'string' ? node.value : String(node.value);
}

/** `node` with an alias followed to what it names. */
export function resolveAlias(node: unknown, doc: Document): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/**
 * A plain scalar's text as Go reads an integer from it (underscores dropped, then
 * strconv.ParseInt base 0), or undefined when Go would not see an integer there.
 */
export function goInteger(text: string): number | undefined {
  const plain = text.replace(/_/g, '');
  const m = GO_INTEGER.exec(plain);
  if (m) {
    const [, sign, digits = ''] = m;
    const lower = digits.toLowerCase();
    let value: number;
    if (lower.startsWith('0x')) value = parseInt(lower.slice(2), 16);
    else if (lower.startsWith('0o')) value = parseInt(lower.slice(2), 8);
    else if (lower.startsWith('0b')) value = parseInt(lower.slice(2), 2);
    else if (lower.length > 1 && lower.startsWith('0')) value = parseInt(lower.slice(1), 8);
    else value = parseInt(lower, 10);
    return sign === '-' ? -value : value;
  }
  if (FLOAT.test(plain)) {
    const value = Number(plain);
    return Number.isInteger(value) ? value : undefined;
  }
  return undefined;
}

/** What a field holds, for an error message: "a map", "a list", "null" or "a scalar". */
export function describeNode(node: unknown): string {
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) return 'null';
  return 'a scalar';
}

/** What goString returns for a map or a list, which no Go string field accepts. */
export const NOT_A_SCALAR: unique symbol = Symbol('not a scalar');

/**
 * A string field read as yaml.v3 fills a Go string: any scalar's text; undefined for
 * null or an absent field; NOT_A_SCALAR for a map or a list (an error for the caller).
 */
export function goString(node: unknown): string | undefined | typeof NOT_A_SCALAR {
  if (node === undefined || node === null) return undefined;
  if (!isScalar(node)) return NOT_A_SCALAR;
  if (node.value === null) return undefined;
  return scalarText(node);
}

/**
 * An integer field read as yaml.v3 fills a Go unsigned integer. Quoted strings are read
 * with the same syntax (Go refuses them; we take `"0600"` to mean what `0600` means).
 * undefined for null, absent or `""`, NaN for anything that is not an integer.
 */
export function goUnsigned(node: unknown): number | undefined {
  if (node === undefined || node === null) return undefined;
  if (!isScalar(node)) return NaN;
  if (node.value === null) return undefined;
  if (typeof node.value === 'number' && !isPlain(node)) return Number.isInteger(node.value) ? node.value : NaN;
  const text = scalarText(node).trim();
  if (text === '') return undefined;
  return goInteger(text) ?? NaN;
}

/**
 * A YAML node as yaml.v3 decodes it into interface{}, converted to the JSON value Go's
 * encoding/json would send: maps (string keys), lists, strings, numbers, booleans, null.
 * Throws an Error naming `where` for what JSON cannot carry (non-string keys are kept
 * as their text, as Go's map[string]interface{} does).
 */
export function goValue(node: unknown, doc: Document, where: string, budget = { left: MAX_VALUES }): unknown {
  // Aliases are expanded: without a bound, nested aliases (a "billion laughs") would
  // let one class make the provider build billions of values.
  if (--budget.left < 0) throw new Error(`${where} holds more than ${MAX_VALUES} values (aliases expanded)`);
  const n = resolveAlias(node, doc);
  if (n === undefined || n === null) return null;
  if (isMap(n)) {
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const pair of n.items) {
      const key = goString(resolveAlias(pair.key, doc));
      if (key === NOT_A_SCALAR) throw new Error(`${where} has a key that is not a scalar`);
      out[key ?? ''] = goValue(pair.value, doc, `${where}.${key ?? ''}`, budget);
    }
    return out;
  }
  if (isSeq(n)) return n.items.map((item, i) => goValue(item, doc, `${where}[${i}]`, budget));
  if (!isScalar(n)) throw new Error(`${where} is not a YAML value`);
  if (!isPlain(n)) return n.value instanceof Date ? n.value.toISOString() : n.value;
  const text = scalarText(n);
  if (NULLS.has(text)) return null;
  const bool = BOOLEANS.get(text);
  if (bool !== undefined) return bool;
  const int = goInteger(text);
  if (int !== undefined) return int;
  if (FLOAT.test(text.replace(/_/g, ''))) return Number(text.replace(/_/g, ''));
  return text;
}

/**
 * A map's entries as Go reads them into a struct: string keys (a key that is not a
 * scalar matches no field: ''), value nodes with aliases followed. undefined when `node`
 * is not a map.
 */
export function mapEntries(node: unknown, doc: Document): [string, unknown][] | undefined {
  if (!isMap(node)) return undefined;
  return node.items.map((pair) => {
    const key = goString(resolveAlias(pair.key, doc));
    return [typeof key === 'string' ? key : '', resolveAlias(pair.value, doc)];
  });
}

/** Largest class parameter parsed as YAML (`objects`): far above any real class, far below what stalls a provider. */
export const MAX_YAML_PARAMETER_BYTES = 256 * 1024;

/**
 * Parses a class parameter as YAML 1.2, bounded and in linear time: text over `maxBytes`
 * is refused, and duplicate map keys are found with one Set per map instead of the
 * `yaml` package's pairwise check (quadratic: 60,000 keys took 33 s). A duplicate key is
 * an error, as yaml.v3's "mapping key already defined". Throws an Error whose message
 * names `what` and never quotes the text.
 */
export function parseYamlParameter(text: string, what: string, maxBytes = MAX_YAML_PARAMETER_BYTES): Document {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) throw new Error(`${what} is ${bytes} bytes; at most ${maxBytes} are read`);
  const doc = parseDocument(text, { version: '1.2', uniqueKeys: false });
  if (doc.errors.length > 0)
    throw new Error(`${what} is not valid YAML: ${(doc.errors[0]?.message ?? '').split('\n')[0]}`);
  const duplicate = duplicateKey(doc.contents);
  if (duplicate !== undefined) throw new Error(`${what} is not valid YAML: mapping key ${duplicate} is defined twice`);
  return doc;
}

/** The first key that appears twice in one map anywhere under `node` (quoted), else undefined. */
function duplicateKey(node: unknown): string | undefined {
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const n = stack.pop();
    if (isMap(n)) {
      const seen = new Set<string>();
      for (const pair of n.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        if (key !== undefined) {
          if (seen.has(key)) return JSON.stringify(key.slice(0, 64));
          seen.add(key);
        }
        stack.push(pair.value);
      }
    } else if (isSeq(n)) {
      for (const item of n.items) stack.push(item);
    }
  }
  return undefined;
}

/**
 * A class parameter that must be a non-empty YAML list of at most `maxItems` entries
 * (`objects` of the vault and exec providers), parsed as parseYamlParameter does. Throws
 * an Error naming `what`; the caller turns it into its provider's INVALID_ARGUMENT.
 */
export function parseYamlList(
  text: string,
  what: string,
  maxItems: number,
): { readonly doc: Document; readonly items: readonly unknown[] } {
  const doc = parseYamlParameter(text, what);
  const list = resolveAlias(doc.contents, doc);
  if (!isSeq(list) || list.items.length === 0) throw new Error(`${what} must be a non-empty YAML list`);
  if (list.items.length > maxItems)
    throw new Error(`${what} lists ${list.items.length} entries; at most ${maxItems} are allowed per class`);
  return { doc, items: list.items };
}
