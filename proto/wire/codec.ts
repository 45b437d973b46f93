/**
 * What every hand-written codec shares: the codec and method shapes, enums, string maps and
 * empty messages. Decoded objects have the shapes proto-loader gave (keepCase, longs: Number,
 * enums: String, defaults: true, oneofs: true), i.e. the generated `X__Output` types.
 */
import { ProtoReader } from './reader.js';
import { ProtoWriter } from './writer.js';

/**
 * A message codec taking the generated input type `In` (optional fields, enums by name or
 * number) and giving the generated `Out` (every field present). It is a
 * `MessageCodec<In>` and a `MessageCodec<Out>` (proto/grpc/method.ts) alike.
 */
export interface WireCodec<In, Out> {
  encode(message: In): Uint8Array;
  decode(bytes: Uint8Array): Out;
}

/**
 * A unary method: its gRPC path and codecs. The server sees it as
 * `UnaryMethod<ReqOut, ResIn>` (decodes requests, encodes responses), a client as
 * `UnaryMethod<ReqIn, ResOut>`.
 */
export interface WireMethod<ReqIn, ReqOut, ResIn, ResOut> {
  readonly path: string;
  readonly request: WireCodec<ReqIn, ReqOut>;
  readonly response: WireCodec<ResIn, ResOut>;
}

/** Builds a codec from a message's fresh default object, its field reader and its writer. */
export function wireCodec<In, Out>(
  typeName: string,
  create: () => Out,
  read: (r: ProtoReader, m: Out) => void,
  write: (w: ProtoWriter, m: In) => void,
): WireCodec<In, Out> {
  return {
    encode(message: In): Uint8Array {
      const w = new ProtoWriter();
      write(w, message);
      return w.finish();
    },
    decode(bytes: Uint8Array): Out {
      const m = create();
      read(new ProtoReader(bytes, typeName), m);
      return m;
    },
  };
}

/** Reads a message that has no fields: unknown fields are checked and skipped. */
export function readEmpty(r: ProtoReader): void {
  while (r.more()) r.skip(r.tag());
}

/** The codec of a message without fields (`GetPluginInfoRequest {}` …): decodes to `{}`, encodes to no bytes. */
export function emptyCodec(typeName: string): WireCodec<{}, {}> {
  return wireCodec<{}, {}>(typeName, () => ({}), readEmpty, () => undefined);
}

/** A proto enum whose values are 0..names.length-1 (all of ours are dense). */
export interface EnumType {
  readonly name: string;
  /** The name of a number; a number without a name stays a number, as proto-loader keeps it. */
  nameOf(value: number): string | number;
  /** The number of a name, or undefined for a name the enum lacks. */
  numberOf(name: string): number | undefined;
}

/** An EnumType from its value names in number order. */
export function enumType<const N extends readonly string[]>(name: string, names: N): EnumType {
  const numbers = new Map<string, number>(names.map((n, i) => [n, i]));
  return {
    name,
    nameOf: (value) => names[value] ?? value,
    numberOf: (n) => numbers.get(n),
  };
}

/** Reads a message whose only field is an enum `type = 1` (PluginCapability.Service, the capabilities' RPC). */
export function enumTypeReader<T extends { type: string | number }>(type: EnumType): (r: ProtoReader, m: T) => void {
  return (r, m) => {
    while (r.more()) {
      const tag = r.tag();
      if (tag === 0x08) m.type = type.nameOf(r.int32()) as T['type'];
      else r.skip(tag);
    }
  };
}

/**
 * Sets a map entry without touching a prototype: a key "__proto__" becomes an own
 * property (as protobufjs 7 leaves it) instead of invoking the setter; "constructor"
 * and the like are ordinary keys. Maps are plain objects, as callers had them.
 */
function setEntry(map: Record<string, string>, key: string, value: string): void {
  if (key === '__proto__') Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
}

/** Reads one `map<string, string>` entry into `map`; a missing key or value is "" and a later key wins. */
export function readStringMapEntry(r: ProtoReader, map: Record<string, string>): void {
  const outer = r.enter();
  let key = '';
  let value = '';
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) key = r.string(); // 1: string key
    else if (tag === 0x12) value = r.string(); // 2: string value
    else r.skip(tag);
  }
  r.leave(outer);
  setEntry(map, key, value);
}
