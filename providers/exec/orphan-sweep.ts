// Which of the exec provider's adopted processes may be killed (pure). The provider is the
// child subreaper of its helpers (orphan-reaper.ts), so a helper's descendant that left the
// helper's process group (setsid, setpgid) and outlived its own parent is re-parented to
// the provider. Such an orphan belongs to a helper that was running when it started; it is
// killed, with everything below it, once no helper that started before it still runs.

/** One process as /proc/<pid>/stat says: its parent and its start time (clock ticks since boot). */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly startTicks: number;
  /** Z: a zombie waiting to be reaped. */
  readonly state: string;
}

/** A helper still running: its pid and when it started (clock ticks since boot). */
export interface RunningHelper {
  readonly pid: number;
  readonly startTicks: number;
}

/** What a sweep does: kill these (each an orphan with its descendants), reap these zombies. */
export interface SweepPlan {
  readonly kill: readonly number[];
  readonly reap: readonly number[];
}

/** True when `orphan` may descend from the running `helper`: it started after the helper did. */
function mayDescend(orphan: ProcessEntry, helper: RunningHelper): boolean {
  return helper.startTicks <= orphan.startTicks;
}

/** `root` and every process below it in `processes`. */
export function subtree(root: number, processes: readonly ProcessEntry[]): number[] {
  const children = new Map<number, number[]>();
  for (const p of processes) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    if (out.includes(pid)) continue;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * The plan for the processes whose parent is the provider (`self`) and that it did not
 * spawn itself (`running`: the helpers Node.js has not reaped yet): a zombie among them
 * is reaped; a live one is killed with its subtree when no running helper may be its
 * ancestor (a helper that ended can no longer be).
 */
export function planSweep(
  self: number,
  processes: readonly ProcessEntry[],
  running: readonly RunningHelper[],
): SweepPlan {
  const spawned = new Set(running.map((h) => h.pid));
  const adopted = processes.filter((p) => p.ppid === self && !spawned.has(p.pid));
  const kill: number[] = [];
  const reap: number[] = [];
  for (const orphan of adopted) {
    if (orphan.state === 'Z') {
      reap.push(orphan.pid);
      continue;
    }
    if (!running.some((h) => mayDescend(orphan, h))) kill.push(...subtree(orphan.pid, processes));
  }
  return { kill, reap };
}
