import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextAccumulator } from '../src/text-accumulator.ts';

describe('TextAccumulator', () => {
  it('reads as the deltas concatenated, however many and whenever it is read', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.constant('雨夜'), fc.constant(null)), {
          maxLength: 400,
        }),
        (steps) => {
          const accumulator = new TextAccumulator();
          let plain = '';
          for (const step of steps) {
            // null: read it in the middle of the stream, as a failed call's usage estimate does.
            if (step === null) expect(accumulator.toString()).toBe(plain);
            else {
              accumulator.append(step);
              plain += step;
            }
            expect(accumulator.length).toBe(plain.length);
          }
          expect(accumulator.toString()).toBe(plain);
        },
      ),
      { numRuns: 500 },
    );
  });
});
