// The process_* half of the default metrics, as prom-client 15's collectDefaultMetrics
// exported them (names, HELP, types and how each value is read), so dashboards and
// docs/metrics.md stay true without loading prom-client.
import { readdirSync, readFileSync } from 'node:fs';
import { Counter } from './counter.js';
import { Gauge } from './gauge.js';
import type { MetricRegistrar } from './metric.js';

/** When this process started (Unix seconds), taken when the module loads, as prom-client did. */
const START_TIME_SECONDS = Math.round(Date.now() / 1000 - process.uptime());

/** VmSize, VmRSS and VmData of /proc/self/status, in bytes (fields not found are left out). */
export function parseProcStatus(status: string): Partial<Record<'VmSize' | 'VmRSS' | 'VmData', number>> {
  const out: Partial<Record<'VmSize' | 'VmRSS' | 'VmData', number>> = {};
  for (const line of status.split('\n')) {
    const m = /^(VmSize|VmRSS|VmData):\s*(\d+) kB$/.exec(line);
    if (m) out[m[1] as 'VmSize' | 'VmRSS' | 'VmData'] = Number(m[2]) * 1024;
  }
  return out;
}

/** The soft "Max open files" limit in /proc/self/limits ("unlimited" is NaN), or undefined without the line. */
export function parseMaxOpenFiles(limits: string): number | undefined {
  const value = limits.split('\n').find((l) => l.startsWith('Max open files'))?.split(/ {2,}/)[1];
  return value === undefined ? undefined : Number(value);
}

function registerCpu(registers: readonly MetricRegistrar[]): void {
  // Counted from registration (prom-client's choice), not from the process start.
  let last = process.cpuUsage();
  const user: Counter = new Counter({
    name: 'process_cpu_user_seconds_total', help: 'Total user CPU time spent in seconds.', registers,
    collect: () => {
      const now = process.cpuUsage();
      const [userMicros, systemMicros] = [now.user - last.user, now.system - last.system];
      last = now;
      user.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers });
}

function registerMemory(registers: readonly MetricRegistrar[]): void {
  if (process.platform !== 'linux') {
    const rss: Gauge = new Gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', registers, collect: () => { try { rss.set(process.memoryUsage.rss()); } catch { /* not on this platform */ } } });
    return;
  }
  const resident: Gauge = new Gauge({
    name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', registers,
    collect: () => {
      let status: ReturnType<typeof parseProcStatus>;
      try {
        // /proc is kernel memory, not disk: a synchronous read does not block.
        status = parseProcStatus(readFileSync('/proc/self/status', 'utf8'));
      } catch {
        return;
      }
      if (status.VmRSS !== undefined) resident.set(status.VmRSS);
      if (status.VmSize !== undefined) virtual.set(status.VmSize);
      if (status.VmData !== undefined) heap.set(status.VmData);
    },
  });
  const virtual = new Gauge({ name: 'process_virtual_memory_bytes', help: 'Virtual memory size in bytes.', registers });
  const heap = new Gauge({ name: 'process_heap_bytes', help: 'Process heap size in bytes.', registers });
}

function registerFileDescriptors(registers: readonly MetricRegistrar[]): void {
  if (process.platform === 'linux') {
    const open: Gauge = new Gauge({
      name: 'process_open_fds', help: 'Number of open file descriptors.', registers,
      // Less the descriptor readdirSync itself had open.
      collect: () => { try { open.set(readdirSync('/proc/self/fd').length - 1); } catch { /* keep the last value */ } },
    });
  }
  let max: number | undefined;
  try {
    max = parseMaxOpenFiles(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return;
  }
  if (max === undefined) return;
  const limit = max;
  const maxFds: Gauge = new Gauge({ name: 'process_max_fds', help: 'Maximum number of open file descriptors.', registers, collect: () => maxFds.set(limit) });
}

/** process_cpu_*, process_start_time_seconds, process memory and file descriptor metrics. */
export function registerProcessMetrics(registry: MetricRegistrar): void {
  const registers = [registry];
  registerCpu(registers);
  const start: Gauge = new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since unix epoch in seconds.', registers, collect: () => start.set(START_TIME_SECONDS) });
  registerMemory(registers);
  registerFileDescriptors(registers);
}
