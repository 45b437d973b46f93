// The exec provider's guarantee that a helper's descendants never outlive it, also when
// they leave its process group (setsid, a double-forking daemon): the provider makes itself
// the child subreaper of everything it spawns (the process-reaper addon), so such orphans
// are re-parented to it; after each helper ends it reads /proc, kills the orphans no running
// helper may own (orphan-sweep.ts) with SIGKILL, and reaps them. A provider that is PID 1
// of its container adopts orphans anyway; without the addon elsewhere they escape to init,
// which start-up says once.
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { Logger } from '../../lib/logging/logger.js';
import { loadNativeAddon } from '../../lib/native-addon.js';
import { planSweep, type ProcessEntry, type RunningHelper } from './orphan-sweep.js';

/** What the addon gives (native/process-reaper.c). */
interface ReaperAddon {
  setChildSubreaper(): void;
  /** waitpid(pid, WNOHANG): pid when reaped, 0 while it runs, -1 when not our child. */
  reap(pid: number): number;
}

/** Sweeps after a helper, until one finds nothing to kill (processes forked meanwhile). */
const MAX_PASSES = 5;
/** How long a pass waits for the processes it killed to die before the next one reaps them. */
const KILL_WAIT_MS = 1000;

/** /proc/<pid>/stat's fields after the command (which may contain spaces and parentheses). */
export function parseStat(pid: number, stat: string): ProcessEntry | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // state is field 3, ppid 4, starttime 22 (proc(5)); `fields` starts at field 3.
  const ppid = Number(fields[1]);
  const startTicks = Number(fields[19]);
  if (!Number.isInteger(ppid) || !Number.isInteger(startTicks)) return undefined;
  return { pid, ppid, startTicks, state: fields[0] ?? '' };
}

async function readProcess(pid: number): Promise<ProcessEntry | undefined> {
  try {
    return parseStat(pid, await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Every process this provider can see (when the kernel has no `children` files). */
async function readAllProcesses(): Promise<ProcessEntry[]> {
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).map(Number);
  const all = await Promise.all(pids.map(readProcess));
  return all.filter((p): p is ProcessEntry => p !== undefined);
}

/** The children of `pid` (every thread's `/proc/<pid>/task/<tid>/children`); undefined when the kernel lacks the file. */
async function childrenOf(pid: number): Promise<number[] | undefined> {
  let tids: string[];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return []; // gone meanwhile
  }
  const lists = await Promise.all(
    tids.map((tid) =>
      readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch((err: NodeJS.ErrnoException) =>
        err.code === 'ENOENT' && pid === process.pid ? undefined : '',
      ),
    ),
  );
  if (lists.some((l) => l === undefined)) return undefined;
  return lists.flatMap((l) => (l ?? '').split(' ').filter(Boolean).map(Number));
}

/** This process's descendants, read from `children` files (a few files, not all of /proc); all processes without them. */
async function readDescendants(self: number): Promise<ProcessEntry[]> {
  const out: ProcessEntry[] = [];
  const todo = [self];
  for (let pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
    const children = await childrenOf(pid);
    if (children === undefined) return readAllProcesses();
    for (const child of children) {
      const entry = await readProcess(child);
      if (entry && !out.some((e) => e.pid === child)) {
        out.push(entry);
        todo.push(child);
      }
    }
  }
  return out;
}

/** Polls until every pid is a zombie or gone (SIGKILL is delivered asynchronously), at most `ms`. */
async function untilDead(pids: readonly number[], ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    const states = await Promise.all(pids.map(readProcess));
    if (states.every((p) => p === undefined || p.state === 'Z' || p.state === 'X')) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** How the helper runner tells the reaper about a helper's life. */
export interface HelperLifecycle {
  /** A helper was spawned (its pid). */
  started(pid: number): void;
  /** It ended and Node.js reaped it: its orphans no other helper may own are killed before this resolves. */
  ended(pid: number): Promise<void>;
}

/** The provider's reaper: the running helpers, and the sweeps after each one ends. */
export class OrphanReaper implements HelperLifecycle {
  private readonly running = new Map<number, RunningHelper>();
  private sweeping: Promise<void> = Promise.resolve();

  constructor(
    private readonly addon: ReaperAddon | undefined,
    private readonly logger: Logger,
    private readonly self: number = process.pid,
  ) {}

  started(pid: number): void {
    // Its start time, read now: a child Node.js has not reaped yet, so /proc has it (a
    // read of a few µs, kept synchronous so no sweep sees the helper without it).
    let startTicks = 0;
    try {
      startTicks = parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'))?.startTicks ?? 0;
    } catch {
      // Unreadable: 0 protects every orphan until this helper ends, never kills one early.
    }
    this.running.set(pid, { pid, startTicks });
  }

  ended(pid: number): Promise<void> {
    this.running.delete(pid);
    // One sweep at a time: two helpers ending together share the work, in order.
    this.sweeping = this.sweeping
      .then(() => this.sweep())
      .catch((err: unknown) => {
        this.logger.warn('exec: could not look for processes a helper left behind', { error: (err as Error).message });
      });
    return this.sweeping;
  }

  /** Kills and reaps what no running helper may own; repeats while a pass finds something. */
  private async sweep(): Promise<void> {
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const plan = planSweep(this.self, await readDescendants(this.self), [...this.running.values()]);
      for (const pid of plan.reap) this.addon?.reap(pid);
      if (plan.kill.length === 0) return;
      for (const pid of plan.kill) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // ESRCH: gone already.
        }
      }
      this.logger.info('exec: killed processes a helper left behind (they had left its process group)', {
        processes: plan.kill.length,
      });
      // The killed become zombies (and their children ours): the next pass reaps and goes on.
      await untilDead(plan.kill, KILL_WAIT_MS);
    }
  }
}

/**
 * The reaper for this process: makes it the subreaper of its descendants when the addon
 * is there; warns once when a helper's descendants that leave its process group can
 * escape (no addon, and not PID 1 of a container).
 */
export function createOrphanReaper(logger: Logger): OrphanReaper {
  const loaded = loadNativeAddon<ReaperAddon>('process_reaper');
  if (loaded.addon) {
    try {
      loaded.addon.setChildSubreaper();
      return new OrphanReaper(loaded.addon, logger);
    } catch (err) {
      logger.warn('exec: cannot become the subreaper of helpers', { error: (err as Error).message });
    }
  } else if (process.pid !== 1) {
    logger.warn(
      "exec: a helper's descendants that leave its process group (setsid) can outlive it: the process-reaper addon is " +
        loaded.why,
      { addon: loaded.path },
    );
  }
  return new OrphanReaper(undefined, logger);
}
