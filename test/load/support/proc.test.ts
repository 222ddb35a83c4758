import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../support/urls.ts';
import { type PrivateNats, startPrivateNats } from './private-nats.ts';
import { cpuMs, natsServerPid, systemCpuMs } from './proc.ts';

// The benchmarks read the CPU of the nats-server their stack uses; with a second server running
// (another benchmark's, or one left behind) the first process of that name may be the other one.
let other: PrivateNats;

beforeAll(async () => {
  other = await startPrivateNats();
});
afterAll(() => other?.stop());

describe('natsServerPid', () => {
  it('finds the server listening on the URL, not another process of the same name', () => {
    expect(natsServerPid(other.url)).toBe(other.pid);
    const machine = natsServerPid(testUrls.nats);
    expect(machine).toBeDefined();
    expect(machine).not.toBe(other.pid);
    expect(readFileSync(`/proc/${machine}/comm`, 'utf8').trim()).toBe('nats-server');
  });
});

describe('systemCpuMs', () => {
  // What a loop cost this process in all and in the kernel.
  const spend = (work: () => void) => {
    const [cpu, system] = [cpuMs(process.pid), systemCpuMs(process.pid)];
    work();
    return { cpu: cpuMs(process.pid) - cpu, system: systemCpuMs(process.pid) - system };
  };

  it('reads the kernel part of a process CPU: most of a loop of system calls, little of a loop of arithmetic', () => {
    // Each read has the kernel fill 256 KiB: its time is the kernel's, not the binding's.
    const zeros = openSync('/dev/zero', 'r');
    const buffer = Buffer.alloc(256 * 1024);
    const calls = spend(() => {
      const until = performance.now() + 300;
      while (performance.now() < until) for (let index = 0; index < 10; index++) readSync(zeros, buffer);
    });
    closeSync(zeros);
    let sum = 0;
    const arithmetic = spend(() => {
      const until = performance.now() + 300;
      while (performance.now() < until) for (let index = 0; index < 100_000; index++) sum += index % 7;
    });
    expect(sum).toBeGreaterThan(0);
    // Ticks are 10 ms: both loops ran for at least 300 ms of wall time, most of it on a core.
    expect(calls.cpu).toBeGreaterThanOrEqual(100);
    expect(arithmetic.cpu).toBeGreaterThanOrEqual(100);
    expect(calls.system).toBeGreaterThan(calls.cpu / 2);
    expect(arithmetic.system).toBeLessThan(arithmetic.cpu / 2);
    expect(systemCpuMs(process.pid)).toBeLessThanOrEqual(cpuMs(process.pid));
  });

  it('reads 0 for a process that is gone', () => {
    expect(systemCpuMs(undefined)).toBe(0);
    expect(systemCpuMs(2 ** 22 + 1)).toBe(0);
  });
});
