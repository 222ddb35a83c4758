import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CpuProfile, categoryShares, GC, OTHER, readProfiles } from './cpu-profile.ts';

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url },
  children,
});

// root → publish (publish.ts) → write (node:net); root → read (client.ts) → publish (publish.ts)
const profile: CpuProfile = {
  nodes: [
    frame(1, '(root)', '', [2, 4, 6, 7, 8]),
    frame(2, 'publishEnvelope', '/repo/libs/bus/src/publish.ts', [3]),
    frame(3, 'writeGeneric', 'node:net'),
    frame(4, 'streamChat', '/repo/libs/llm/src/client.ts', [5]),
    frame(5, 'publishEnvelope', '/repo/libs/bus/src/publish.ts'),
    frame(6, '(garbage collector)', ''),
    frame(7, '(idle)', ''),
    frame(8, 'somethingElse', '/repo/x.ts'),
  ],
  startTime: 1000,
  endTime: 2000,
  // One sample every 100 µs from 1100 on.
  samples: [3, 5, 6, 7, 8, 3, 3, 7, 5, 3],
  timeDeltas: Array.from({ length: 10 }, () => 100),
};
const categories = [
  { name: 'model read', pattern: /libs\/llm\/src\/client\.ts/ },
  { name: 'frame publish', pattern: /libs\/bus\/src\/publish\.ts/ },
];

describe('categoryShares', () => {
  it('counts each busy sample in the window for the first category its stack matches', () => {
    const { busySamples, shares } = categoryShares(profile, { fromUs: 0, toUs: 10_000 }, categories);
    expect(busySamples).toBe(8);
    // The publish under the model read is the model read's: that category comes first.
    expect(shares).toEqual({ 'frame publish': 4 / 8, 'model read': 2 / 8, [GC]: 1 / 8, [OTHER]: 1 / 8 });
  });

  it('leaves out the samples outside the window', () => {
    // Samples at 1100 … 2000: 1300 … 1500 are GC, idle and other.
    const { busySamples, shares } = categoryShares(profile, { fromUs: 1300, toUs: 1500 }, categories);
    expect(busySamples).toBe(2);
    expect(shares).toEqual({ [GC]: 0.5, [OTHER]: 0.5 });
  });
});

describe('readProfiles', () => {
  it("reads a child's --cpu-prof output by pid, its samples on this process's monotonic clock", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cpu-profile-test-'));
    try {
      const script = [
        'const from = Number(process.hrtime.bigint() / 1000n);',
        'function busyLoop() { let x = 0; for (let i = 0; i < 3e8; i++) x += i % 7; return x; }',
        'busyLoop();',
        'const to = Number(process.hrtime.bigint() / 1000n);',
        'console.log(JSON.stringify({ pid: process.pid, from, to }));',
      ].join('\n');
      const output = execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '-e', script], {
        encoding: 'utf8',
      });
      const child = JSON.parse(output) as { pid: number; from: number; to: number };
      const read = readProfiles(dir);
      expect([...read.keys()]).toEqual([child.pid]);
      const busy = [{ name: 'busy', pattern: /^busyLoop / }];
      const inside = categoryShares(read.get(child.pid)!, { fromUs: child.from, toUs: child.to }, busy);
      expect(inside.busySamples).toBeGreaterThan(0);
      expect(inside.shares.busy).toBeGreaterThan(0.9);
      // Before the child started there is nothing: the clocks agree.
      const before = categoryShares(read.get(child.pid)!, { fromUs: 0, toUs: child.from - 1_000_000 }, busy);
      expect(before.busySamples).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
