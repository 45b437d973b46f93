import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EXIT_DRAIN_MS } from '../../lib/exit.js';

// The driver and the providers log their last lines ("shutting down", "driver stopped")
// and exit on SIGTERM (lib/signals.ts). Node writes to a pipe asynchronously
// once the pipe is full and process.exit() drops what is still queued: with a slow log
// reader the last lines were lost (48 of 600 arrived through a shell pipe read after 1 s,
// winston and the logger alike). The exit now waits for stderr, bounded by EXIT_DRAIN_MS.
// 600 lines of ~1 KiB are more than a pipe holds (64 KiB).

const RUNTIME = fileURLToPath(new URL('../../lib/', import.meta.url));
const LINES = 600;
const SCRIPT = `
const { createLogger } = await import(${JSON.stringify(pathToFileURL(join(RUNTIME, 'logging/logger.js')).href)});
const { onTerminationSignal } = await import(${JSON.stringify(pathToFileURL(join(RUNTIME, 'signals.js')).href)});
const logger = createLogger({ component: 'exit-test' });
setInterval(() => undefined, 60_000);
onTerminationSignal(async () => { for (let i = 0; i < ${LINES}; i++) logger.info('line', { i, pad: 'x'.repeat(1000), token: 'secret-value' }); });
process.kill(process.pid, 'SIGTERM');
`;

function start(stderr: 'pipe' | number): ChildProcess {
  return spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], { stdio: ['ignore', 'ignore', stderr] });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function lineNumbers(text: string): number[] {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { i: number; token: string });
  expect(lines.every((l) => l.token === '[REDACTED]')).to.equal(true);
  return lines.map((l) => l.i);
}

const ALL = Array.from({ length: LINES }, (_, i) => i);

describe('logger: the lines logged before a signal exit are written', () => {
  it('through a pipe read slowly', async () => {
    const child = start('pipe');
    const stderr = child.stderr as NodeJS.ReadableStream;
    const chunks: Buffer[] = [];
    // One chunk per turn of the event loop: the child fills the pipe and must wait for us.
    stderr.on('data', (d: Buffer) => {
      chunks.push(d);
      stderr.pause();
      setImmediate(() => stderr.resume());
    });
    const [code] = await Promise.all([exited(child), new Promise((resolve) => stderr.once('end', resolve))]);
    expect(code).to.equal(0);
    expect(lineNumbers(Buffer.concat(chunks).toString())).to.deep.equal(ALL);
  });

  it('into a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ssc-logger-exit-'));
    try {
      const path = join(dir, 'stderr.log');
      const fd = openSync(path, 'w');
      const child = start(fd);
      closeSync(fd);
      expect(await exited(child)).to.equal(0);
      expect(lineNumbers(readFileSync(path, 'utf8'))).to.deep.equal(ALL);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a reader that never reads holds the exit for EXIT_DRAIN_MS at most', async () => {
    const child = start('pipe');
    const started = performance.now();
    const code = await exited(child);
    const elapsed = performance.now() - started;
    child.stderr?.destroy();
    expect(code).to.equal(0);
    expect(elapsed).to.be.within(EXIT_DRAIN_MS, EXIT_DRAIN_MS + 5000);
  });
});
