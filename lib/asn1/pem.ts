// PEM as upstream reads and writes it (Go's encoding/pem): the same blocks found in
// the same input, re-encoded byte for byte as Go does, so a synced tls.crt/tls.key
// equals upstream's. Strings here are "binary" (latin1) strings: one char per byte, so
// labels and header values round-trip unchanged whatever their encoding.

/** One PEM block: its label, its headers (RFC 1421, e.g. Proc-Type) and its decoded bytes. */
export interface PemBlock {
  readonly type: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly bytes: Buffer;
}

const PEM_BEGIN = Buffer.from('-----BEGIN ');
const PEM_END = Buffer.from('\n-----END ');
const DASHES = Buffer.from('-----');

/** One line without its `\n` (and a `\r` before it), trailing spaces and tabs removed. */
function getLine(data: Buffer): { line: Buffer; rest: Buffer; consumed: number } {
  const nl = data.indexOf(0x0a);
  let end = nl < 0 ? data.length : nl;
  const consumed = nl < 0 ? data.length : nl + 1;
  if (nl > 0 && data[nl - 1] === 0x0d) end--;
  while (end > 0 && (data[end - 1] === 0x20 || data[end - 1] === 0x09)) end--;
  return { line: data.subarray(0, end), rest: data.subarray(consumed), consumed };
}

// Go's unicode.IsSpace, spelled as UTF-8 byte sequences in a binary string.
const SPACE =
  '(?:[\\t\\n\\v\\f\\r ]|\\xC2[\\x85\\xA0]|\\xE1\\x9A\\x80|\\xE2\\x80[\\x80-\\x8A\\xA8\\xA9\\xAF]|\\xE2\\x81\\x9F|\\xE3\\x80\\x80)';
const TRIM = new RegExp(`^${SPACE}+|${SPACE}+$`, 'g');

function trimSpace(bytes: Buffer): string {
  return bytes.toString('latin1').replace(TRIM, '');
}

// Go's base64.StdEncoding.Decode: newlines skipped, padding required, nothing after it.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(region: Buffer): Buffer | undefined {
  const text = region.toString('latin1').replace(/[ \t\r\n]/g, '');
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/**
 * Finds the next PEM block in `data`, as Go's pem.Decode does: the first END line, the
 * last BEGIN line before it, optional `key: value` headers, base64 up to END, the END
 * label equal to the BEGIN label. Returns no block, and all of `data` as rest, when
 * there is none; otherwise the block and what follows its END line.
 */
export function decodePem(data: Buffer): { block?: PemBlock; rest: Buffer } {
  let rest = data;
  let endTrailerIndex = 0;
  for (;;) {
    if (endTrailerIndex < 0 || endTrailerIndex > rest.length) return { rest: data };
    rest = rest.subarray(endTrailerIndex);
    let endIndex = rest.indexOf(PEM_END);
    if (endIndex < 0) return { rest: data };
    endTrailerIndex = endIndex + PEM_END.length;
    const beginIndex = rest.subarray(0, endIndex).lastIndexOf(PEM_BEGIN);
    if (beginIndex < 0 || (beginIndex > 0 && rest[beginIndex - 1] !== 0x0a)) continue;
    const skip = beginIndex + PEM_BEGIN.length;
    rest = rest.subarray(skip);
    endIndex -= skip;
    endTrailerIndex -= skip;

    const typeLine = getLine(rest);
    rest = typeLine.rest;
    endIndex -= typeLine.consumed;
    endTrailerIndex -= typeLine.consumed;
    if (!typeLine.line.subarray(-DASHES.length).equals(DASHES) || typeLine.line.length < DASHES.length) continue;
    const type = typeLine.line.subarray(0, typeLine.line.length - DASHES.length);

    const headers = new Map<string, string>();
    for (;;) {
      if (rest.length === 0) return { rest: data };
      const { line, rest: next, consumed } = getLine(rest);
      const colon = line.indexOf(0x3a);
      if (colon < 0) break;
      headers.set(trimSpace(line.subarray(0, colon)), trimSpace(line.subarray(colon + 1)));
      rest = next;
      endIndex -= consumed;
      endTrailerIndex -= consumed;
    }
    // With headers there must be a newline between them and the END line.
    if (headers.size > 0 && endIndex < 0) continue;
    if (endTrailerIndex < 0) continue;

    // After "-----END " the same label, five dashes, then only spaces and tabs.
    const trailerLength = type.length + DASHES.length;
    const endTrailer = rest.subarray(endTrailerIndex);
    if (endTrailer.length < trailerLength) continue;
    if (
      !endTrailer.subarray(0, type.length).equals(type) ||
      !endTrailer.subarray(type.length, trailerLength).equals(DASHES)
    )
      continue;
    if (getLine(endTrailer.subarray(trailerLength)).line.length !== 0) continue;

    let bytes: Buffer | undefined = Buffer.alloc(0);
    if (endIndex > 0) bytes = decodeBase64(rest.subarray(0, endIndex));
    if (bytes === undefined) continue;
    // endIndex is -1 when the END line follows the BEGIN line directly (its "\n" was the BEGIN line's).
    const after = getLine(rest.subarray(endIndex + PEM_END.length - 1)).rest;
    return { block: { type: type.toString('latin1'), headers, bytes }, rest: after };
  }
}

/** Every PEM block of `data` in order, and what follows the last one (all of `data` if none). */
export function decodeAllPem(data: Buffer): { blocks: PemBlock[]; rest: Buffer } {
  const blocks: PemBlock[] = [];
  let rest = data;
  for (;;) {
    const next = decodePem(rest);
    if (!next.block) return { blocks, rest };
    blocks.push(next.block);
    rest = next.rest;
  }
}

/**
 * Go's pem.EncodeToMemory: BEGIN line, headers (Proc-Type first, the rest sorted by
 * key) and a blank line, base64 in lines of 64, END line, each line ending in "\n".
 * Undefined where Go returns nil (a header key containing ':').
 */
export function encodePem(block: PemBlock): Buffer | undefined {
  const keys = [...block.headers.keys()];
  if (keys.some((k) => k.includes(':'))) return undefined;
  const ordered = [
    ...keys.filter((k) => k === 'Proc-Type'),
    ...keys
      .filter((k) => k !== 'Proc-Type')
      .sort((a, b) => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'))),
  ];
  let text = `-----BEGIN ${block.type}-----\n`;
  if (ordered.length > 0) text += `${ordered.map((k) => `${k}: ${block.headers.get(k) as string}\n`).join('')}\n`;
  const b64 = block.bytes.toString('base64');
  for (let i = 0; i < b64.length; i += 64) text += `${b64.slice(i, i + 64)}\n`;
  text += `-----END ${block.type}-----\n`;
  return Buffer.from(text, 'latin1');
}
