import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { createLoopRecorder, LOOP_MONITOR_FLAGS } from './loop-delay.ts';

// A child that holds its event loop for BLOCK_MS when told to (a line on stdin), as a service
// does in a long callback, and otherwise idles.
const BLOCK_MS = 80;
const CHILD = `
process.stdin.on('data', () => {
  const until = performance.now() + ${BLOCK_MS};
  while (performance.now() < until);
  process.stdout.write('blocked\\n');
});
process.stdout.write('ready\\n');
`;

describe('the capacity benchmark’s event-loop figures', () => {
  it('reads how late a service’s loop ran in the window between two signals, from the preload', async () => {
    const child = spawn(process.execPath, [...LOOP_MONITOR_FLAGS, '-e', CHILD], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const recorder = createLoopRecorder();
    const said = new Set<string>();
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      said.add(line);
      recorder.onLine('worker-1', line);
    });
    const heard = async (line: string) => {
      while (!said.has(line)) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    try {
      await heard('ready');
      await recorder.open({ 'worker-1': child.pid });
      child.stdin!.write('\n');
      await heard('blocked');
      const blocked = await recorder.close();

      expect(Object.keys(blocked).sort()).toEqual(['bench-client', 'worker-1']);
      const worker = blocked['worker-1']!;
      // The tick after the block came at least the block late (less the 10 ms between ticks);
      // a loaded machine only makes it later.
      expect(worker.maxMs).toBeGreaterThanOrEqual(BLOCK_MS - 10);
      expect(worker.p99Ms).toBeLessThanOrEqual(worker.maxMs);
      expect(worker.utilization).toBeGreaterThan(0);
      expect(worker.utilization).toBeLessThanOrEqual(1);
    } finally {
      child.kill();
    }
  });
});
