// Azure's provider reads every parameter and object field through Go's
// strings.TrimSpace and compares names with strings.EqualFold; JavaScript's trim() and
// toUpperCase() differ at the edges (U+0085 is space to Go, U+FEFF is not), so a value
// means here what it means there.

/** Go's unicode.IsSpace: ASCII spaces, U+0085, U+00A0 and the Unicode space separators. */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'gu');

/** Go's strings.TrimSpace. */
export function goTrimSpace(text: string): string {
  return text.replace(TRIM, '');
}

/**
 * Go's strings.EqualFold for the ASCII names compared here: case-insensitive, with the
 * two non-ASCII letters Unicode folds onto ASCII ones (U+017F ſ ~ s, U+212A Kelvin ~ k).
 */
export function goEqualFold(a: string, b: string): boolean {
  const fold = (s: string) =>
    s
      .replace(/\u017f/g, 's')
      .replace(/\u212a/g, 'k')
      .toLowerCase();
  return fold(a) === fold(b);
}
