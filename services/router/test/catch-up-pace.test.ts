import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catchUpIntervalMs, createCatchUpPace } from '../src/catch-up-pace.ts';

// A router's step-log catch-ups on a budget of reads a second (docs/decisions/0078).
describe('catch-up pace', () => {
  const shipped = { floorMs: 5000, ceilingMs: 60_000, perSecond: 20 };

  it('reads each log at the floor while few wait, less often as more do, never past the ceiling', () => {
    expect(catchUpIntervalMs(1, shipped)).toBe(5000);
    expect(catchUpIntervalMs(100, shipped)).toBe(5000);
    expect(catchUpIntervalMs(300, shipped)).toBe(15_000);
    expect(catchUpIntervalMs(500, shipped)).toBe(25_000);
    expect(catchUpIntervalMs(1200, shipped)).toBe(60_000);
    expect(catchUpIntervalMs(5000, shipped)).toBe(60_000);
  });

  it('keeps every interval between floor and ceiling, and the process within its budget below the ceiling', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        fc.integer({ min: 1, max: 1000 }),
        (waiting, floorMs, extraMs, perSecond) => {
          const settings = { floorMs, ceilingMs: floorMs + extraMs, perSecond };
          const interval = catchUpIntervalMs(waiting, settings);
          expect(interval).toBeGreaterThanOrEqual(floorMs);
          expect(interval).toBeLessThanOrEqual(settings.ceilingMs);
          // Each waiting log reads once an interval: the reads a second in all.
          if (interval < settings.ceilingMs)
            expect((waiting * 1000) / interval).toBeLessThanOrEqual(perSecond);
        },
      ),
    );
  });

  it('counts the logs waiting, each once however often it says it stopped', () => {
    const pace = createCatchUpPace(shipped);
    const first = pace.waiting();
    const second = pace.waiting();
    expect(pace.waitingNow).toBe(2);
    first();
    first();
    expect(pace.waitingNow).toBe(1);
    second();
    expect(pace.waitingNow).toBe(0);
  });

  it('spreads an interval a quarter either side of the budget’s, the ceiling still the longest', () => {
    let next = 0;
    const pace = createCatchUpPace({ floorMs: 1000, ceilingMs: 10_000, perSecond: 10, random: () => next });
    const stops = Array.from({ length: 50 }, () => pace.waiting());
    // 50 waiting at 10 a second: 5 s each on average.
    expect(pace.nextIntervalMs()).toBe(3750);
    next = 0.5;
    expect(pace.nextIntervalMs()).toBe(5000);
    next = 0.999_999;
    expect(pace.nextIntervalMs()).toBe(6250);
    // 200 waiting would need 20 s: the ceiling, and no spread past it.
    stops.push(...Array.from({ length: 150 }, () => pace.waiting()));
    expect(pace.nextIntervalMs()).toBe(10_000);
    next = 0;
    expect(pace.nextIntervalMs()).toBe(7500);
    for (const stop of stops) stop();
    next = 0.5;
    expect(pace.nextIntervalMs()).toBe(1000);
  });
});
