import { expect } from 'chai';
import type { WireCodec } from '../../proto/wire/codec.js';
import { CSI_CONTROLLER, CSI_IDENTITY } from '../../proto/wire/csi-identity.js';
import { CSI_NODE, UNSERVED_NODE_METHODS } from '../../proto/wire/csi-node.js';
import { CSI_PROVIDER } from '../../proto/wire/provider.js';
import { ProtobufDecodeError } from '../../proto/wire/reader.js';
import { fieldBoundaries, mutate, type Mutation } from '../support/protobuf-mutations.js';
import { ProtobufOracle, type OracleEntry } from '../support/protobuf-oracle.js';
import { WIRE_SAMPLES } from '../support/wire-samples.js';

// protobufjs, as grpc-js and proto-loader used it, is the oracle: whatever it decodes from
// some bytes, ours must decode the same from them, and what ours encodes it must decode to
// what it makes of its own encoding. The samples set every field (checked below), so a
// wrong field number, wire type or enum table fails here.

const oracle = new ProtobufOracle();

const TABLES: Record<string, Record<string, { path: string; request: WireCodec<unknown, unknown>; response: WireCodec<unknown, unknown> }>> = {
  'csi.v1.Identity': CSI_IDENTITY,
  'csi.v1.Controller': CSI_CONTROLLER,
  'csi.v1.Node': CSI_NODE,
  'v1alpha1.CSIDriverProvider': CSI_PROVIDER,
};

function oracleEntry(service: string, method: string): OracleEntry {
  const entry = oracle.services.get(service)?.get(method);
  if (!entry) throw new Error(`${service}/${method} not in the protos`);
  return entry;
}

/** Ours decoding `bytes`, or the ProtobufDecodeError it throws. */
function oursOrError(codec: WireCodec<unknown, unknown>, bytes: Buffer): unknown {
  try {
    return codec.decode(bytes);
  } catch (err) {
    if (err instanceof ProtobufDecodeError) return err;
    throw err;
  }
}

/**
 * Where to cut an encoding: everywhere in a small one; in a large one (20 KB strings) the
 * 16 bytes either side of each top-level field boundary (tags, lengths, the start of values)
 * and every 251st byte, so the test stays fast.
 */
function cutPoints(length: number, boundaries: ReadonlySet<number>): number[] {
  const cuts: number[] = [];
  for (let cut = 0; cut < length; cut++) {
    const nearBoundary = [...boundaries].some((b) => Math.abs(b - cut) <= 16);
    if (length <= 1024 || nearBoundary || cut % 251 === 0) cuts.push(cut);
  }
  return cuts;
}

describe('protobuf codecs (proto/wire) against protobufjs', () => {
  it('have exactly the methods of the CSI services we serve and of the provider service, at grpc paths', () => {
    for (const [service, table] of Object.entries(TABLES)) {
      const methods = oracle.services.get(service);
      expect(methods, service).to.not.equal(undefined);
      expect(Object.keys(table).sort(), service).to.deep.equal([...(methods?.keys() ?? [])].sort());
      for (const [name, m] of Object.entries(table)) expect(m.path).to.equal(oracleEntry(service, name).method.path).and.equal(`/${service}/${name}`);
    }
  });

  for (const [service, table] of Object.entries(TABLES)) {
    for (const [name, ours] of Object.entries(table)) {
      if (service === 'csi.v1.Node' && UNSERVED_NODE_METHODS.has(name)) continue;
      for (const direction of ['request', 'response'] as const) {
        describe(`${ours.path} ${direction}`, () => {
          const entry = oracleEntry(service, name);
          const typeName = entry[direction];
          const codec = ours[direction];
          const serialize = (m: unknown): Buffer => (direction === 'request' ? entry.method.requestSerialize(m) : entry.method.responseSerialize(m));
          const deserialize = (b: Buffer): unknown => (direction === 'request' ? entry.method.requestDeserialize(b) : entry.method.responseDeserialize(b));
          const samples = WIRE_SAMPLES[ours.path]?.[direction === 'request' ? 'requests' : 'responses'] ?? [];
          const encodings = (): Buffer[] => samples.flatMap((s) => [serialize(s), Buffer.from(codec.encode(s))]);

          it('has samples', () => expect(samples).to.not.be.empty);

          it('encodes what protobufjs decodes to the same object as its own encoding', () => {
            for (const sample of samples) expect(deserialize(Buffer.from(codec.encode(sample)))).to.deep.equal(deserialize(serialize(sample)));
          });

          it('decodes its own and protobufjs encodings to what protobufjs decodes', () => {
            for (const bytes of encodings()) expect(codec.decode(bytes)).to.deep.equal(deserialize(bytes));
          });

          for (const how of ['reverse', 'unknown-fields', 'stale-duplicates'] as Mutation[]) {
            it(`decodes encodings rewritten with ${how} at every level like protobufjs`, () => {
              for (const bytes of encodings()) {
                const mutated = mutate(oracle, typeName, bytes, how);
                expect(codec.decode(mutated)).to.deep.equal(deserialize(mutated));
                if (how !== 'reverse') expect(codec.decode(mutated)).to.deep.equal(deserialize(bytes));
              }
            });
          }

          it('refuses a cut inside a field (any, in small encodings) with a ProtobufDecodeError naming the type, and decodes a cut between fields like protobufjs', () => {
            for (const bytes of encodings()) {
              const boundaries = fieldBoundaries(bytes);
              for (const cut of cutPoints(bytes.length, boundaries)) {
                const prefix = bytes.subarray(0, cut);
                const result = oursOrError(codec, prefix);
                if (boundaries.has(cut)) expect(result, `cut at ${cut}`).to.deep.equal(deserialize(prefix));
                else expect(result, `cut at ${cut}`).to.be.instanceOf(ProtobufDecodeError).and.have.property('typeName', typeName);
              }
            }
          });

          it('refuses a group and a truncated field after valid ones', () => {
            const valid = serialize(samples[samples.length - 1]);
            for (const tail of [[0x0b], [0xfa, 0x38], [0xf2, 0x38, 0x05, 0x41]]) {
              expect(() => codec.decode(Buffer.concat([valid, Buffer.from(tail)]))).to.throw(ProtobufDecodeError, `${typeName}: `);
            }
          });
        });
      }
    }
  }

  it('the samples set every field of every message to a non-default value, and use every enum value', () => {
    const fields = new Set<string>();
    const covered = new Set<string>();
    const enumValues = new Map<string, Set<unknown>>();
    const enumOf = (typeName: string, typeRef: string): string => oracle.resolve(typeName, typeRef, oracle.enums);
    const register = (typeName: string): void => {
      for (const f of oracle.message(typeName).field) {
        fields.add(`${typeName}.${f.name}`);
        if (f.type === 'TYPE_ENUM' && !enumValues.has(enumOf(typeName, f.typeName))) enumValues.set(enumOf(typeName, f.typeName), new Set());
        const nested = oracle.isMap(typeName, f) ? undefined : oracle.fieldMessage(typeName, f);
        if (nested !== undefined) register(nested);
      }
    };
    const walk = (typeName: string, value: Record<string, unknown>): void => {
      for (const f of oracle.message(typeName).field) {
        const nested = oracle.isMap(typeName, f) ? undefined : oracle.fieldMessage(typeName, f);
        const v = value[f.name];
        if (v === undefined || v === null) continue;
        const values: unknown[] = f.label === 'LABEL_REPEATED' && Array.isArray(v) ? v : [v];
        if (f.type === 'TYPE_ENUM') for (const e of values) enumValues.get(enumOf(typeName, f.typeName))?.add(e);
        const set = Array.isArray(v) ? v.length > 0 : Buffer.isBuffer(v) ? v.length > 0
          : typeof v === 'object' ? nested !== undefined || Object.keys(v).length > 0 : v !== '' && v !== 0 && v !== false && v !== 'UNKNOWN';
        if (set) covered.add(`${typeName}.${f.name}`);
        if (nested !== undefined) for (const item of values) walk(nested, item as Record<string, unknown>);
      }
    };
    for (const [service, table] of Object.entries(TABLES)) {
      for (const [name, ours] of Object.entries(table)) {
        if (service === 'csi.v1.Node' && UNSERVED_NODE_METHODS.has(name)) continue;
        const entry = oracleEntry(service, name);
        register(entry.request);
        register(entry.response);
        for (const s of WIRE_SAMPLES[ours.path]?.requests ?? []) walk(entry.request, entry.method.requestDeserialize(entry.method.requestSerialize(s)) as Record<string, unknown>);
        for (const s of WIRE_SAMPLES[ours.path]?.responses ?? []) walk(entry.response, entry.method.responseDeserialize(entry.method.responseSerialize(s)) as Record<string, unknown>);
      }
    }
    expect([...fields].filter((f) => !covered.has(f))).to.deep.equal([]);
    for (const [enumName, seen] of enumValues) {
      const names = (oracle.enums.get(enumName) ?? []).map((v) => v.name);
      expect(names.filter((n) => !seen.has(n)), enumName).to.deep.equal([]);
    }
    expect(enumValues.size).to.equal(5);
  });
});

describe('the Node methods the driver answers UNIMPLEMENTED (proto/wire)', () => {
  for (const name of UNSERVED_NODE_METHODS) {
    it(`${name}: any well-formed request decodes to {}, a truncated one is refused`, () => {
      const entry = oracleEntry('csi.v1.Node', name);
      const codec = CSI_NODE[name as keyof typeof CSI_NODE].request as WireCodec<unknown, unknown>;
      const samples = WIRE_SAMPLES[`/csi.v1.Node/${name}`]?.requests ?? [];
      expect(samples).to.not.be.empty;
      for (const sample of samples) {
        const bytes = entry.method.requestSerialize(sample);
        expect(codec.decode(bytes)).to.deep.equal({});
        if (bytes.length > 1) expect(oursOrError(codec, bytes.subarray(0, bytes.length - 1))).to.be.instanceOf(ProtobufDecodeError);
      }
    });
  }
});
