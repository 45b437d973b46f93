import { execFile } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { cpus, platform, release, totalmem, arch } from 'node:os';
import { promisify } from 'node:util';
import { mountPointsUnder } from '../driver/mount/mountinfo.js';
import { benchNode } from './processes.js';

const execFileAsync = promisify(execFile);

/** Resident memory of a process from /proc/<pid>/status, in KiB. */
export interface ProcessMemory {
  /** VmRSS: resident set size now. */
  readonly rssKiB: number;
  /** VmHWM: peak resident set size so far. */
  readonly hwmKiB: number;
}

function statusField(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
  if (!m) throw new Error(`no ${field} in /proc status`);
  return Number(m[1]);
}

/** Reads VmRSS and VmHWM of `pid` (Linux only). */
export async function processMemory(pid: number): Promise<ProcessMemory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssKiB: statusField(status, 'VmRSS'), hwmKiB: statusField(status, 'VmHWM') };
}

/** Where a process's resident memory is: anonymous (heap, stacks, malloc) or file-backed, and how much of the latter is its own program file. */
export interface MemoryBreakdown {
  readonly anonKiB: number;
  readonly fileKiB: number;
  /** Resident pages of the executable's own mappings (the node or Go binary), part of fileKiB. */
  readonly binaryKiB: number;
}

/**
 * RssAnon / RssFile of `pid` and the resident pages of its executable, from /proc (issue
 * 15: most of a Node process's RSS over the Go driver's is pages of the node binary that
 * V8's compilers and the loaded built-in modules touched, not heap).
 */
export async function memoryBreakdown(pid: number): Promise<MemoryBreakdown> {
  const [status, smaps, exe] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8'),
    readFile(`/proc/${pid}/smaps`, 'utf8'),
    readlink(`/proc/${pid}/exe`),
  ]);
  let binaryKiB = 0;
  let inBinary = false;
  for (const line of smaps.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      inBinary = mapping[1] === exe;
      continue;
    }
    const rss = inBinary ? /^Rss:\s+(\d+) kB$/.exec(line) : null;
    if (rss) binaryKiB += Number(rss[1]);
  }
  return { anonKiB: statusField(status, 'RssAnon'), fileKiB: statusField(status, 'RssFile'), binaryKiB };
}

export const mib = (kib: number): number => Math.round((kib / 1024) * 10) / 10;

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux we run on). */
const USER_HZ = 100;

/**
 * CPU time `pid` has used so far (user + system, all its threads, libuv's pool included),
 * in ms, from /proc/<pid>/stat (10 ms resolution). Steadier than wall time on a shared machine.
 */
export async function processCpuMs(pid: number): Promise<number> {
  const t = statCpuTicks(await readFile(`/proc/${pid}/stat`, 'utf8'), pid);
  return ((t.utime + t.stime) * 1000) / USER_HZ;
}

/**
 * CPU time `pid`'s live threads have run so far, in ms at nanosecond resolution: the sum
 * of /proc/<pid>/task/<tid>/schedstat's first field (the scheduler's sum_exec_runtime).
 * /proc/<pid>/stat counts in 10 ms ticks, too coarse for calls of 0.3–1 ms (a row read from
 * it swung from run to run: bench/README.md, "Versus upstream's Go driver"). Threads that have exited are
 * not in it; the servers measured keep theirs (libuv's pool, V8's workers, Go's Ms).
 */
export async function threadsCpuMs(pid: number): Promise<number> {
  const tids = await readdir(`/proc/${pid}/task`);
  // A thread that exited meanwhile is gone (ENOENT, ESRCH); the main thread must be readable.
  const texts = await Promise.all(
    tids.map((tid) =>
      readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (tid !== String(pid) && (err.code === 'ENOENT' || err.code === 'ESRCH')) return '0';
        throw err;
      }),
    ),
  );
  let ns = 0;
  for (const text of texts) ns += schedstatRunNs(text);
  return ns / 1e6;
}

/**
 * CPU ms per second each of `pids` spends over `windowMs` of doing nothing: timers, GC
 * tasks, watches. A wait is the measurement here (an idle process has no event to await).
 */
export async function idleCpuMsPerSecond(pids: readonly number[], windowMs: number): Promise<number[]> {
  const before = await Promise.all(pids.map((pid) => threadsCpuMs(pid)));
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = await Promise.all(pids.map((pid) => threadsCpuMs(pid)));
  const seconds = (performance.now() - t0) / 1000;
  return pids.map((_, i) => (after[i]! - before[i]!) / seconds);
}

/** The run time (ns) of a schedstat line: "<run ns> <wait ns> <timeslices>". */
export function schedstatRunNs(text: string): number {
  const ns = Number(text.trim().split(' ')[0]);
  if (!Number.isFinite(ns)) throw new Error(`cannot read schedstat "${text.trim()}"`);
  return ns;
}

/**
 * threadsCpuMs plus the CPU time of `pid`'s children that exited and were waited for
 * (cutime + cstime of /proc/<pid>/stat: kept in ns by the kernel, shown in 10 ms ticks).
 * The Go driver runs mount(8)/umount(8) as child processes.
 */
export async function processTreeCpuPreciseMs(pid: number): Promise<number> {
  const [threads, stat] = await Promise.all([threadsCpuMs(pid), readFile(`/proc/${pid}/stat`, 'utf8')]);
  const t = statCpuTicks(stat, pid);
  return threads + ((t.cutime + t.cstime) * 1000) / USER_HZ;
}

/** utime, stime, cutime, cstime (clock ticks) of a /proc/<pid>/stat line. */
export function statCpuTicks(
  stat: string,
  pid: number,
): { utime: number; stime: number; cutime: number; cstime: number } {
  // Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
  if (![utime, stime, cutime, cstime].every((x) => Number.isFinite(x)))
    throw new Error(`cannot read CPU times of ${pid}`);
  return { utime: utime!, stime: stime!, cutime: cutime!, cstime: cstime! };
}

/** Mount points at or below `dir` in our mount namespace, deepest first (for cleanup). */
export async function mountsUnder(dir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  return mountPointsUnder(text, dir);
}

/** Unmounts everything left below `dir` (a crashed run must not leave tmpfs mounts behind). */
export async function unmountAllUnder(dir: string): Promise<string[]> {
  const left = await mountsUnder(dir);
  for (const point of left) {
    await execFileAsync('umount', ['-l', point]).catch((err: unknown) => {
      process.stderr.write(`bench: could not unmount ${point}: ${(err as Error).message}\n`);
    });
  }
  return left;
}

/** The machine the numbers came from. */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly cpuCount: number;
  readonly totalMemMiB: number;
  readonly nodeVersion: string;
  /** The node our driver and providers ran on (benchNode), when not the runner's own. */
  readonly processNode?: { readonly version: string; readonly source: string; readonly note?: string };
  readonly platform: string;
  readonly kernel: string;
  readonly arch: string;
  readonly uid: number | undefined;
  readonly gitCommit: string | undefined;
  /** Uncommitted changes to tracked files outside bench/results/ when the run started. */
  readonly gitDirty: boolean | undefined;
}

async function git(args: string[], cwd: string): Promise<string | undefined> {
  try {
    return (await execFileAsync('git', args, { cwd })).stdout.trim();
  } catch {
    return undefined;
  }
}

export async function machineInfo(repoDir: string): Promise<MachineInfo> {
  const cpu = cpus();
  // bench/results/ is left out: `npm run bench` updates latest.json before the rotation benchmark starts.
  const status = await git(
    ['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results'],
    repoDir,
  );
  return {
    cpuModel: cpu[0]?.model ?? 'unknown',
    cpuCount: cpu.length,
    totalMemMiB: Math.round(totalmem() / (1024 * 1024)),
    nodeVersion: process.version,
    processNode: (({ version, source, note }) => ({ version, source, ...(note ? { note } : {}) }))(benchNode()),
    platform: platform(),
    kernel: release(),
    arch: arch(),
    uid: process.getuid?.(),
    gitCommit: await git(['rev-parse', 'HEAD'], repoDir),
    gitDirty: status === undefined ? undefined : status !== '',
  };
}
