import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeMountResponse } from '../driver/provider-client/mount-response-decoder.js';
import type { MountResponse } from '../proto/gen/v1alpha1/MountResponse.js';
import { providerProto } from '../lib/grpc/grpc-proto.js';
import { Pacer } from '../lib/pacer.js';
import { machineInfo } from './proc.js';
import { benchNode, benchNodeFlags } from './processes.js';
import { runBench, table, writeJson } from './report.js';
import { summarize } from './stats.js';

/**
 * Why the driver decodes a provider's Mount response itself, in slices (part of `npm run
 * bench`; alone: `npm run bench:decode`): how long decoding a 4 MiB response holds the
 * event loop when it is decoded in one call, as grpc-js's default deserializer of the
 * method (protobufjs's decode + toObject) does, against the driver's paced decoder
 * (protobufjs's Reader and message types, a turn of the event loop every ~10 ms). The
 * paced decoder stays only while the one-call decode exceeds 100 ms. The decoding runs in
 * a child process on the images' Node and flags, as the driver does: the young generation's
 * size decides how often a decode of 100,000 objects stops for garbage collection.
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT_MS = 100;
const RUNS = 7;

/** A response of `files` small files filling ~4 MiB, one object version. */
function response(files: number, bytes: number): MountResponse {
  const size = Math.max(1, Math.floor(bytes / files) - 12);
  const content = Buffer.alloc(size, 'x');
  return {
    object_version: [{ id: 'bulk', version: '1' }],
    files: Array.from({ length: files }, (_, i) => ({ path: `f${i}`, mode: 0o644, contents: content })),
  };
}

/** The longest time between two turns of the event loop while `work` runs. */
async function longestHold(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  let running = true;
  const tick = (): void => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  tick();
  return longest;
}

/** One measured response size: the whole-message and the paced decode, each RUNS times. */
interface DecodeRow {
  readonly files: number;
  readonly mib: number;
  readonly wholeMs: ReturnType<typeof summarize>;
  readonly pacedHoldMs: ReturnType<typeof summarize>;
}

/** The child's work: decode each shape RUNS times both ways; the rows as JSON on stdout. */
async function measure(): Promise<void> {
  const mount = providerProto().CSIDriverProvider.service.Mount;
  const shapes = [
    { files: 100_000, bytes: 4 * 1024 * 1024 - 64 * 1024 },
    { files: 250_000, bytes: 4 * 1024 * 1024 - 64 * 1024 },
  ];
  const rows: DecodeRow[] = [];
  for (const shape of shapes) {
    const bytes = mount.responseSerialize(response(shape.files, shape.bytes - shape.files * 8));
    const whole: number[] = [];
    const paced: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      whole.push(await longestHold(async () => mount.responseDeserialize(bytes)));
      paced.push(await longestHold(() => decodeMountResponse(bytes, new Pacer())));
    }
    rows.push({
      files: shape.files,
      mib: Math.round(bytes.length / 10485.76) / 100,
      wholeMs: summarize(whole),
      pacedHoldMs: summarize(paced),
    });
  }
  process.stdout.write(JSON.stringify(rows));
}

async function main(): Promise<void> {
  const node = benchNode();
  const flags = benchNodeFlags();
  const out = execFileSync(node.path, [...flags, fileURLToPath(import.meta.url), '--child'], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024,
  });
  const rows = JSON.parse(out) as DecodeRow[];
  const fmt = (s: ReturnType<typeof summarize>): string =>
    `${s.p50.toFixed(0)} (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
  process.stdout.write(
    `\nEvent loop held while decoding a Mount response, ms: median (min–max) of ${RUNS}; node ${node.version} ${flags.join(' ')}\n`,
  );
  process.stdout.write(
    table(
      ['files', 'MiB', 'one call (grpc-js default)', 'paced decoder, longest hold'],
      rows.map((r) => [String(r.files), r.mib.toFixed(2), fmt(r.wholeMs), fmt(r.pacedHoldMs)]),
      new Set([0, 1, 2, 3]),
    ),
  );
  const keep = rows.some((r) => r.wholeMs.p50 > LIMIT_MS);
  process.stdout.write(
    `\none-call decode over ${LIMIT_MS} ms: ${keep ? 'yes, the paced decoder stays' : 'no, grpc-js could decode it'}\n`,
  );
  const results = {
    kind: 'mount-decode',
    machine: await machineInfo(REPO_DIR),
    node: node.version,
    nodeFlags: flags,
    limitMs: LIMIT_MS,
    runs: RUNS,
    rows,
    pacedDecoderNeeded: keep,
  };
  await writeJson(join(REPO_DIR, 'bench', 'results', 'mount-decode-latest.json'), results);
}

if (process.argv.includes('--child')) void measure();
else runBench('mount-decode', main);
