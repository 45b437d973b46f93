// Text from another process (a provider's error message, error code or file path) ends up
// in gRPC messages to kubelet, in events and in log lines. Unbounded, it can flood all
// three; with control characters it can forge log lines or drive a terminal (ANSI
// escapes), and bidi controls make it read differently from what it is.

/**
 * Characters shown escaped: C0 and C1 controls, DEL, lone surrogates, and the invisible
 * or reordering format characters (soft hyphen, zero-width and bidi marks, line and
 * paragraph separators, BOM, interlinear annotation). With the `u` flag a surrogate
 * pair is one code point, so only a lone half matches.
 */
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  return SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The first `maxChars` UTF-16 units of `text`, never ending in half a surrogate pair. */
function head(text: string, maxChars: number): string {
  const cut = text.slice(0, maxChars);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * `text` made safe to show: at most `maxChars` characters of it (then `…`), with control
 * and invisible format characters escaped (`\n`, `\u001b`). Everything else is kept, so
 * a well-behaved provider's message reads as it wrote it.
 */
export function printable(text: string, maxChars: number): string {
  const shown = head(text, maxChars);
  return shown.replace(UNSAFE, escapeChar) + (shown.length < text.length ? '…' : '');
}

/**
 * `text` in double quotes for a message, bounded and escaped like `printable`; quotes
 * and backslashes inside are escaped too, so the quoted part cannot be mistaken for the
 * driver's own words.
 */
export function quoted(text: string, maxChars: number): string {
  const shown = head(text, maxChars);
  const escaped = shown.replace(/["\\]/g, (c) => `\\${c}`).replace(UNSAFE, escapeChar);
  return `"${escaped}${shown.length < text.length ? '…' : ''}"`;
}
