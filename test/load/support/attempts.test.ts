import { describe, expect, it } from 'vitest';
import { type CapacityLevel, idleShare, levelHeld, spread, summarizeAttempts } from './attempts.ts';
import { machineTicks } from './proc.ts';

const level = (values: Partial<CapacityLevel> & { level: number }): CapacityLevel => ({
  failures: 0,
  frame_p99_ms: 50,
  token_p99_ms: 50,
  machine_cpu_cores: 1.8,
  tokens_received_per_second: 10_000,
  load_average: 1,
  ...values,
});

describe('levelHeld', () => {
  it('holds with no failed run and the frame p99 within the limit, the limit included', () => {
    expect(levelHeld(level({ level: 500, frame_p99_ms: 100 }), 100)).toBe(true);
    expect(levelHeld(level({ level: 500, frame_p99_ms: 100.5 }), 100)).toBe(false);
    expect(levelHeld(level({ level: 500, failures: 1 }), 100)).toBe(false);
  });
});

describe('summarizeAttempts', () => {
  it('counts a level over the attempts that reached it, not over all of them', () => {
    const runs = [
      { limit_ms: 100, levels: [level({ level: 400 }), level({ level: 500, frame_p99_ms: 70 })] },
      // Stopped at 400: 500 was never measured in this attempt.
      { limit_ms: 100, levels: [level({ level: 400, frame_p99_ms: 160 })] },
      { limit_ms: 100, levels: [level({ level: 400 }), level({ level: 500, frame_p99_ms: 130 })] },
    ];
    const [at400, at500] = summarizeAttempts([400, 500], runs);
    expect(at400).toMatchObject({ level: 400, measured: 3, held: 2, frameP99Ms: [50, 160, 50] });
    expect(at500).toMatchObject({ level: 500, measured: 2, held: 1, frameP99Ms: [70, 130] });
  });

  it('gives the machine CPU per token in µs from its cores and the tokens received', () => {
    const [summary] = summarizeAttempts(
      [500],
      [
        {
          limit_ms: 100,
          levels: [level({ level: 500, machine_cpu_cores: 1.75, tokens_received_per_second: 10_000 })],
        },
      ],
    );
    expect(summary!.machineUsPerToken).toEqual([175]);
  });

  it('uses each run’s own limit', () => {
    const [summary] = summarizeAttempts(
      [300],
      [
        { limit_ms: 50, levels: [level({ level: 300, frame_p99_ms: 60 })] },
        { limit_ms: 100, levels: [level({ level: 300, frame_p99_ms: 60 })] },
      ],
    );
    expect(summary).toMatchObject({ measured: 2, held: 1 });
  });
});

describe('spread', () => {
  it('prints min–max, one value as itself, nothing as a dash', () => {
    expect(spread([131, 69.3, 209])).toBe('69–209');
    expect(spread([43.3])).toBe('43');
    expect(spread([])).toBe('-');
  });
});

describe('idleShare', () => {
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const stat = (user: number, system: number, idle: number, iowait = 0) =>
    machineTicks(`cpu  ${user} 0 ${system} ${idle} ${iowait} 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n`);

  it('is the idle and iowait part of the ticks between the two readings', () => {
    expect(idleShare(stat(100, 50, 1000), stat(130, 60, 1060))).toBeCloseTo(60 / 100);
    expect(idleShare(stat(0, 0, 0, 0), stat(10, 0, 80, 10))).toBeCloseTo(0.9);
  });

  it('counts no ticks at all as idle', () => {
    expect(idleShare(stat(1, 1, 1), stat(1, 1, 1))).toBe(1);
  });
});
