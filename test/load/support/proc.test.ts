import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../support/urls.ts';
import { type PrivateNats, startPrivateNats } from './private-nats.ts';
import { cpuMs, natsServerPid, systemCpuMs } from './proc.ts';
import { sleep } from './stats.ts';

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
  /**
   * The kernel's share of what a child process spent between two readings, the first once it has
   * used `from` ms of CPU (past its start-up), the second `span` ms of CPU later: read while it
   * runs, however slowly a loaded machine lets it.
   */
  async function kernelShare(command: string, args: string[], from = 100, span = 300): Promise<number> {
    const child = spawn(command, args, { stdio: 'ignore' });
    try {
      const until = async (ms: number) => {
        while (cpuMs(child.pid) < ms) await sleep(20);
        return { cpu: cpuMs(child.pid), system: systemCpuMs(child.pid) };
      };
      const first = await until(from);
      const second = await until(first.cpu + span);
      return (second.system - first.system) / (second.cpu - first.cpu);
    } finally {
      child.kill('SIGKILL');
    }
  }

  it('reads the kernel part of a process CPU: most of a copy from /dev/zero, little of a loop of arithmetic', async () => {
    // dd's time is the kernel's filling and copying 1 MiB blocks; node's is its loop.
    const copying = await kernelShare('dd', ['if=/dev/zero', 'of=/dev/null', 'bs=1M']);
    const looping = await kernelShare(process.execPath, ['-e', 'for (let i = 0; ; i++) i %= 7;']);
    // Seen on a loaded machine: copying 0.5–0.95 (10 ms ticks, split by sampling), looping 0.
    expect(copying - looping).toBeGreaterThan(0.3);
    expect(looping).toBeLessThan(0.3);
  });

  it('reads 0 for a process that is gone', () => {
    expect(systemCpuMs(undefined)).toBe(0);
    expect(systemCpuMs(2 ** 22 + 1)).toBe(0);
  });
});
