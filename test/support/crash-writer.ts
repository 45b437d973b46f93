/**
 * A process that writes one payload generation into a target with the real AtomicWriter
 * and kills itself with SIGKILL right after a named write step (the fault point), as a
 * node losing the driver mid-write would. Used by the atomic writer's crash tests.
 *   node crash-writer.js <target> <generation> <step|none>
 * Generation N holds files `f0 … f<N+1>` (one more top-level name each generation, and
 * the first one removed from generation 2 on) with content `gen N`, nested `dir/x`, and
 * `.metadata` with one object per file at version `vN`.
 */
import { AtomicWriter, type WriteStep } from '../../driver/volume/atomic-writer.js';
import { metadataFiles, versionsFile } from '../../driver/volume/metadata.js';
import type { Payload, PayloadFile } from '../../driver/volume/payload.js';

/** The payload and versions of generation `n` (see the file comment). */
export function generation(n: number): { payload: Payload; volatile: Payload } {
  const files = new Map<string, PayloadFile>();
  for (let i = n >= 2 ? 1 : 0; i <= n + 1; i++) files.set(`f${i}`, { mode: 0o644, contents: Buffer.from(`gen ${n}`) });
  files.set('dir/x', { mode: 0o600, contents: Buffer.from(`gen ${n}`) });
  const versions = [...files.keys()].map((id) => ({ id, version: `v${n}` }));
  return {
    payload: new Map([...files, ...metadataFiles(versions)]),
    volatile: versionsFile(versions, new Date(Date.UTC(2026, 10, 23, 0, 0, n))),
  };
}

async function main(): Promise<void> {
  const [target, gen, crashAt] = process.argv.slice(2) as [string, string, string];
  const writer = new AtomicWriter({
    onStep: (step: WriteStep) => {
      if (step === crashAt) process.kill(process.pid, 'SIGKILL');
    },
  });
  const { payload, volatile } = generation(Number(gen));
  await writer.write(target, payload, volatile, new Date(Date.UTC(2026, 10, 23, 0, 0, Number(gen))));
}

if (process.argv[1]?.endsWith('crash-writer.js')) void main();
