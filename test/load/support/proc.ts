import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { rounded } from './stats.ts';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User and system CPU time a process has used so far, in ms; zeros once it is gone. */
function cpuTimes(pid: number | undefined): { user: number; system: number } {
  if (pid === undefined) return { user: 0, system: 0 };
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces: the fields start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      user: (Number(fields[11]) * 1000) / TICKS_PER_SECOND,
      system: (Number(fields[12]) * 1000) / TICKS_PER_SECOND,
    };
  } catch {
    return { user: 0, system: 0 };
  }
}

/** CPU time (user + system) a process has used so far, in ms; 0 once it is gone. */
export function cpuMs(pid: number | undefined): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** CPU time a process has spent in the kernel (system time) so far, in ms; 0 once it is gone. */
export function systemCpuMs(pid: number | undefined): number {
  return cpuTimes(pid).system;
}

/** Resident set size (VmRSS) in KiB, from /proc/<pid>/status. */
export function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) : 0;
}

/** Read and write system calls a process has made so far (/proc/<pid>/io); zeros once it is gone. */
function syscallCounts(pid: number | undefined): { reads: number; writes: number } {
  if (pid === undefined) return { reads: 0, writes: 0 };
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return {
      reads: Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0),
      writes: Number(/syscw: (\d+)/.exec(io)?.[1] ?? 0),
    };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

export type SyscallCounts = ReturnType<typeof syscallCounts>;

/** Each named process's system calls so far. */
export function syscallsOf(pids: Record<string, number | undefined>): Record<string, SyscallCounts> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, syscallCounts(pid)]));
}

/**
 * Per service (an instance's replica suffix `-<n>` dropped, replicas summed), the system calls
 * made between two readings of `syscallsOf`, divided by `launches`.
 */
export function syscallsPerService(
  before: Record<string, SyscallCounts>,
  after: Record<string, SyscallCounts>,
  launches: number,
): Record<string, SyscallCounts> {
  const result: Record<string, SyscallCounts> = {};
  for (const [instance, counts] of Object.entries(after)) {
    const service = instance.replace(/-\d+$/, '');
    const row = result[service] ?? { reads: 0, writes: 0 };
    result[service] = row;
    row.reads += counts.reads - (before[instance]?.reads ?? 0);
    row.writes += counts.writes - (before[instance]?.writes ?? 0);
  }
  for (const row of Object.values(result)) {
    row.reads /= launches;
    row.writes /= launches;
  }
  return rounded(result);
}

/** What `read` (a per-process reading in ms) grew by per named process between two moments. */
function meterOf(read: (pid: number | undefined) => number) {
  return (pids: Record<string, number | undefined>): (() => Record<string, number>) => {
    const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, read(pid)]));
    return () =>
      Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, read(pid) - (before[name] ?? 0)]));
  };
}

/** CPU ms per named process between two moments: `const done = cpuMeter(pids); …; done()`. */
export const cpuMeter = meterOf(cpuMs);

/** The kernel's part of `cpuMeter`: system CPU ms per named process between two moments. */
export const systemCpuMeter = meterOf(systemCpuMs);

/** The 1-minute load average: other work on the machine skews every figure, so each report shows it. */
export function loadAverage(): number {
  return Number(loadavg()[0]!.toFixed(2));
}

/**
 * The pid of the nats-server that serves `url`: the process listening on its port. A benchmark
 * that died before stopping its own private server leaves one more process of that name behind,
 * and the first found by name may be that idle one (its figures then read 0). Falls back to the
 * name when the port's owner cannot be seen.
 */
export function natsServerPid(url: string): number | undefined {
  return listeningPid(Number(new URL(url).port || 4222)) ?? findPid('nats-server');
}

/** The pid of the process with a TCP socket listening on `port`, if this user can see it. */
function listeningPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st … inode: st 0A is LISTEN, the port is the address's hex suffix.
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== '0A' || fields[9] === undefined) continue;
      if (Number.parseInt(fields[1]?.split(':')[1] ?? '', 16) === port) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const descriptor of descriptors) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${descriptor}`))?.[1];
        if (inode && inodes.has(inode)) return Number(entry);
      } catch {
        // Closed while we looked.
      }
    }
  }
  return undefined;
}

/** The pid of the first process whose command name is `name` (e.g. `nats-server`), if any. */
function findPid(name: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

/**
 * CPU ms of every process named `name` (e.g. `postgres`), with what their ended children used:
 * PostgreSQL serves each connection from a process of its own, and one that has ended is counted
 * in its parent (the postmaster) once reaped. For the machine's shared servers, whose work for a
 * benchmark is not counted in the services'.
 */
export function namedProcessesCpuMs(name: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== name) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime stime cutime cstime
      total += fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0);
    } catch {
      // The process ended while we looked.
    }
  }
  return (total * 1000) / TICKS_PER_SECOND;
}

/** Busy CPU ms of the whole machine (all cores) between two moments, from /proc/stat. */
export function machineCpuMeter(): () => number {
  const busy = () => (machineTicks().busy * 1000) / TICKS_PER_SECOND;
  const before = busy();
  return () => busy() - before;
}

export interface MachineTicks {
  busy: number;
  total: number;
}

/**
 * The machine's CPU time so far in clock ticks, from the first line of /proc/stat (`stat`, read
 * now when not given): busy is everything but idle and iowait.
 */
export function machineTicks(stat = readFileSync('/proc/stat', 'utf8')): MachineTicks {
  const fields = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

export interface CpuSample {
  /** preciseNow() of the reading. */
  at: number;
  /** CPU ms so far per named process. */
  cpu: Record<string, number>;
}

/**
 * Reads the CPU time of named processes every `intervalMs`, so the CPU of a window that is only
 * known afterwards (e.g. while every run was streaming) can be cut out with `cpuBetween`.
 */
export function startCpuSampler(
  pids: Record<string, number | undefined>,
  intervalMs = 250,
): { stop(): CpuSample[] } {
  const samples: CpuSample[] = [];
  const read = () => {
    const cpu: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) cpu[name] = cpuMs(pid);
    samples.push({ at: performance.timeOrigin + performance.now(), cpu });
  };
  read();
  const timer = setInterval(read, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      read();
      return samples;
    },
  };
}

/** CPU ms per process between the samples nearest inside [from, to], and the span they cover. */
export function cpuBetween(
  samples: readonly CpuSample[],
  from: number,
  to: number,
): { cpu: Record<string, number>; ms: number } {
  const inside = samples.filter((sample) => sample.at >= from && sample.at <= to);
  const first = inside[0];
  const last = inside.at(-1);
  if (!first || !last || last === first) return { cpu: {}, ms: 0 };
  const cpu: Record<string, number> = {};
  for (const name of Object.keys(last.cpu)) cpu[name] = last.cpu[name]! - (first.cpu[name] ?? 0);
  return { cpu, ms: last.at - first.at };
}
