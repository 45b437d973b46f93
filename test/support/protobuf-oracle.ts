/**
 * protobufjs (through @grpc/proto-loader, with the options the driver used at runtime) as
 * the oracle for the hand-written codecs of proto/wire, and the schema walking the codec
 * tests need: which field is a message, a map, an enum, where its type is.
 */
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';

const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));

/** The options the driver loaded protos with before proto/wire (grpc-js-proto.ts has the same): what callers saw. */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

/** A field as protobufjs's descriptor gives it. */
export interface FieldDescriptor {
  readonly name: string;
  readonly number: number;
  readonly label: string;
  readonly type: string;
  readonly typeName: string;
}

/** A message type as protobufjs's descriptor gives it. */
export interface MessageDescriptor {
  readonly name: string;
  readonly field: readonly FieldDescriptor[];
  readonly nestedType: readonly MessageDescriptor[];
  readonly enumType: readonly { readonly name: string; readonly value: readonly { readonly name: string; readonly number: number }[] }[];
  readonly options: { readonly mapEntry?: boolean } | null;
}

/** One unary method as grpc-js saw it: its path, protobufjs (de)serializers and message types. */
export interface OracleMethod {
  readonly path: string;
  requestSerialize(m: unknown): Buffer;
  requestDeserialize(b: Buffer): unknown;
  responseSerialize(m: unknown): Buffer;
  responseDeserialize(b: Buffer): unknown;
  readonly requestType: { readonly type: MessageDescriptor };
  readonly responseType: { readonly type: MessageDescriptor };
}

/** A method with the full names of its request and response types (`csi.v1.NodePublishVolumeRequest`). */
export interface OracleEntry {
  readonly method: OracleMethod;
  readonly request: string;
  readonly response: string;
}

/** Both protos' services and message types, loaded once. */
export class ProtobufOracle {
  /** Services by full name, each its methods by name. */
  readonly services = new Map<string, Map<string, OracleEntry>>();
  readonly messages = new Map<string, MessageDescriptor>();
  readonly enums = new Map<string, readonly { readonly name: string; readonly number: number }[]>();

  constructor() {
    for (const file of ['csi/csi.proto', 'provider/service.proto']) {
      const definition = protoLoader.loadSync(file, { ...LOADER_OPTIONS, includeDirs: [PROTO_DIR] });
      for (const [name, value] of Object.entries(definition)) {
        if ('format' in value) this.addMessage(name, (value as unknown as { type: MessageDescriptor }).type);
        else this.services.set(name, this.methodsOf(name, value as unknown as Record<string, OracleMethod>));
      }
    }
  }

  private methodsOf(service: string, methods: Record<string, OracleMethod>): Map<string, OracleEntry> {
    const pkg = service.slice(0, service.lastIndexOf('.'));
    return new Map(Object.entries(methods).map(([name, method]) => [name, {
      method, request: `${pkg}.${method.requestType.type.name}`, response: `${pkg}.${method.responseType.type.name}`,
    }]));
  }

  private addMessage(fullName: string, d: MessageDescriptor): void {
    this.messages.set(fullName, d);
    for (const nested of d.nestedType) this.addMessage(`${fullName}.${nested.name}`, nested);
    for (const e of d.enumType) this.enums.set(`${fullName}.${e.name}`, e.value);
  }

  /** The full name `typeName` means inside message `scope` (protobuf's scoping: innermost first). */
  resolve(scope: string, typeName: string, table: ReadonlyMap<string, unknown> = this.messages): string {
    if (typeName.startsWith('.')) return typeName.slice(1);
    for (let s = scope; ; s = s.slice(0, Math.max(0, s.lastIndexOf('.')))) {
      const candidate = s === '' ? typeName : `${s}.${typeName}`;
      if (table.has(candidate)) return candidate;
      if (s === '') throw new Error(`cannot resolve ${typeName} in ${scope}`);
    }
  }

  /** The descriptor of a message by full name. */
  message(fullName: string): MessageDescriptor {
    const d = this.messages.get(fullName);
    if (!d) throw new Error(`no message ${fullName}`);
    return d;
  }

  /** The full name of a message-typed field's type, or undefined for other fields. */
  fieldMessage(scope: string, f: FieldDescriptor): string | undefined {
    return f.type === 'TYPE_MESSAGE' ? this.resolve(scope, f.typeName) : undefined;
  }

  /** True for a map field (a repeated field of a map-entry message). */
  isMap(scope: string, f: FieldDescriptor): boolean {
    const type = this.fieldMessage(scope, f);
    return type !== undefined && this.message(type).options?.mapEntry === true;
  }
}

/** The wire type a field of this descriptor type uses. */
export function wireTypeOf(f: FieldDescriptor): number {
  switch (f.type) {
    case 'TYPE_STRING': case 'TYPE_BYTES': case 'TYPE_MESSAGE': return 2;
    case 'TYPE_FIXED64': case 'TYPE_SFIXED64': case 'TYPE_DOUBLE': return 1;
    case 'TYPE_FIXED32': case 'TYPE_SFIXED32': case 'TYPE_FLOAT': return 5;
    default: return 0;
  }
}
