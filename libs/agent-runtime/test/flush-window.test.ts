import { describe, expect, it } from 'vitest';
import { createFlushWindow, windowFor } from '../src/flush-window.ts';

const settings = { baseMs: 40, maxMs: 100 };

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Spinning is the point: this is what a saturated event loop looks like.
  }
}

describe('windowFor', () => {
  it('keeps the base window while the loop has room and reaches the maximum when saturated', () => {
    expect(windowFor(0, settings)).toBe(40);
    expect(windowFor(0.6, settings)).toBe(40);
    expect(windowFor(0.75, settings)).toBeCloseTo(70);
    expect(windowFor(0.9, settings)).toBe(100);
    expect(windowFor(1, settings)).toBe(100);
  });
});

describe('createFlushWindow', () => {
  it('stretches while the process is saturated and comes back once it has room', async () => {
    let saturation = 0.95;
    const window = createFlushWindow({ ...settings, sampleMs: 20, measure: () => saturation });
    try {
      expect(window.ms).toBe(40);
      // Several samples see a saturated process.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(window.ms).toBeGreaterThan(80);
      saturation = 0.2;
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(window.ms).toBeLessThan(45);
    } finally {
      window.close();
    }
  });

  it('is fixed when the maximum is not above the base', () => {
    const window = createFlushWindow({ baseMs: 40, maxMs: 40 });
    busyFor(50);
    expect(window.ms).toBe(40);
    window.close();
  });
});
