/**
 * CPU of the hand-written protobuf codecs (proto/wire) against protobufjs as grpc-js used
 * it (proto-loader's serialize = fromObject + encode, deserialize = decode + toObject),
 * issue 15. Encodes and decodes 10,000 kubelet-like NodePublishVolumeRequests and 10,000
 * MountResponses of 10 files, in alternating rounds so machine noise hits both alike, and
 * prints the median CPU time per round and per message.
 *   node dist/bench/wire-codecs.js [--rounds N]
 */
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { inlinePublishRequest, inlineVolumeContext } from '../bin/csi-client.js';
import { decodeMountResponse } from '../driver/provider-client/mount-response-decoder.js';
import type { MountResponse } from '../proto/gen/v1alpha1/MountResponse.js';
import { Pacer } from '../proto/runtime/pacer.js';
import { CSI_NODE } from '../proto/wire/csi-node.js';
import { CSI_PROVIDER } from '../proto/wire/provider.js';
import { median, numberOption } from './stats.js';

const MESSAGES = 10_000;
const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));
const OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR] };

/** What a kubelet sends for a pod's inline volume with a service-account token in secrets. */
function publishRequest(i: number): ReturnType<typeof inlinePublishRequest> {
  const context = inlineVolumeContext({ name: `web-${i}`, namespace: 'default', uid: '0f3c1b9e-6b0a-4d3c-9f5e-2a1b3c4d5e6f', serviceAccountName: 'web' }, 'app-secrets');
  const tokens = JSON.stringify({ '': { token: 'eyJhbGciOiJSUzI1NiJ9.'.padEnd(900, 'x'), expirationTimestamp: '2030-01-01T00:00:00Z' } });
  return inlinePublishRequest(`csi-${i}`, `/var/lib/kubelet/pods/0f3c1b9e/volumes/kubernetes.io~csi/secrets-${i}/mount`, context,
    { 'csi.storage.k8s.io/serviceAccount.tokens': tokens }, '1000');
}

/** A provider's answer of 10 objects, one ~100-byte file each. */
function mountResponse(): MountResponse {
  const ids = Array.from({ length: 10 }, (_, i) => `secret/data/app/key-${i}`);
  return {
    object_version: ids.map((id) => ({ id, version: 'c2VjcmV0LXZlcnNpb24tMQ' })),
    files: ids.map((id) => ({ path: id.replaceAll('/', '_'), mode: 0o644, contents: Buffer.from(`value of ${id} `.padEnd(100, '=')) })),
  };
}

interface Contender {
  readonly name: string;
  /** Encodes and decodes every message once; returns a checksum so nothing is optimised away. */
  run(): Promise<number> | number;
}

async function cpuMs(c: Contender): Promise<number> {
  const start = process.cpuUsage();
  await c.run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function main(): Promise<void> {
  const rounds = numberOption(process.argv.slice(2), '--rounds', 7, 1);
  const csi = protoLoader.loadSync('csi/csi.proto', OPTIONS);
  const provider = protoLoader.loadSync('provider/service.proto', OPTIONS);
  const pjPublish = (csi['csi.v1.Node'] as protoLoader.ServiceDefinition)['NodePublishVolume'] as protoLoader.MethodDefinition<object, object>;
  const pjMount = (provider['v1alpha1.CSIDriverProvider'] as protoLoader.ServiceDefinition)['Mount'] as protoLoader.MethodDefinition<object, object>;
  const requests = Array.from({ length: MESSAGES }, (_, i) => publishRequest(i));
  const response = mountResponse();
  const ours = CSI_NODE.NodePublishVolume.request;
  const oursMount = CSI_PROVIDER.Mount.response;

  const groups: [string, number, Contender[]][] = [
    [`NodePublishVolumeRequest (${ours.encode(requests[0] ?? {}).length} bytes)`, MESSAGES, [
      { name: 'proto/wire', run: () => requests.reduce((n, r) => n + ours.decode(ours.encode(r)).volume_id.length, 0) },
      { name: 'protobufjs', run: () => requests.reduce((n, r) => n + (pjPublish.requestDeserialize(pjPublish.requestSerialize(r)) as { volume_id: string }).volume_id.length, 0) },
    ]],
    [`MountResponse, 10 files (${oursMount.encode(response).length} bytes)`, MESSAGES, [
      { name: 'proto/wire', run: () => { let n = 0; for (let i = 0; i < MESSAGES; i++) n += oursMount.decode(oursMount.encode(response)).files.length; return n; } },
      { name: 'proto/wire, paced decoder (the driver\'s)', run: async () => {
        let n = 0;
        for (let i = 0; i < MESSAGES; i++) n += (await decodeMountResponse(oursMount.encode(response), new Pacer())).files.length;
        return n;
      } },
      { name: 'protobufjs', run: () => { let n = 0; for (let i = 0; i < MESSAGES; i++) n += (pjMount.responseDeserialize(pjMount.responseSerialize(response)) as { files: unknown[] }).files.length; return n; } },
    ]],
  ];

  process.stdout.write(`node ${process.version}, ${rounds} alternating rounds of ${MESSAGES} encode+decode each; median CPU\n\n`);
  for (const [title, count, contenders] of groups) {
    for (const c of contenders) await c.run(); // warm up the JIT
    const times = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round < rounds; round++) for (const c of contenders) times.get(c.name)?.push(await cpuMs(c));
    const baseline = median(times.get('protobufjs') ?? []);
    process.stdout.write(`${title}\n`);
    for (const c of contenders) {
      const ms = median(times.get(c.name) ?? []);
      process.stdout.write(`  ${c.name.padEnd(42)} ${ms.toFixed(1).padStart(7)} ms  ${(ms * 1000 / count).toFixed(2).padStart(6)} µs/msg  ${(ms / baseline).toFixed(2)}×\n`);
    }
    process.stdout.write('\n');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`wire-codecs bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
