import type { SseFrame } from '@quill/contracts';
import { type ScriptedReply, textReply, toolReply } from '@quill/llm/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { softLandingNote } from '../src/run-budget.ts';
import { runHarness } from './step-harness.ts';

/** Any reply a model may give: plain, cut at the length limit, or tools (some unavailable). */
const replyArb: fc.Arbitrary<ScriptedReply> = fc.oneof(
  fc.string({ maxLength: 6 }).map((text) => textReply(`好${text}`)),
  fc.string({ maxLength: 6 }).map((text) => textReply(`半${text}`, { finish: 'length' })),
  fc
    .array(fc.constantFrom('query_files', 'summon_muse', 'create_file', 'handoff_to_agent'), {
      minLength: 1,
      maxLength: 4,
    })
    .map((names) => toolReply(names.map((name, index) => ({ id: `c${index}`, name, arguments: {} })))),
  fc.constant<ScriptedReply>([{ text: '断' }, { error: { kind: 'stream_interrupted' } }]),
);

describe('step machine properties', () => {
  it('whatever the model says: one message_end, last; calls within the cap; every tool_call answered', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { minLength: 12, maxLength: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 3 }),
        async (replies, maxTurns, maxContinuations) => {
          const run = await runHarness({ replies, maxTurns, maxContinuations });
          const ends = run.frames.filter((frame) => frame.type === 'message_end');
          expect(ends).toHaveLength(1);
          expect(run.frames.at(-1)?.type).toBe('message_end');
          expect(run.requests.length).toBeLessThanOrEqual(maxTurns);
          const calls = ids(run.frames, 'tool_call');
          expect(ids(run.frames, 'tool_result')).toEqual(calls);
          if (run.result === 'handed_back' || !run.result)
            throw new Error('the step always has a result here');
          expect(run.result.model_calls).toBeLessThanOrEqual(run.requests.length);
          expect(run.result.tool_calls).toBe(calls.length);
          // Each journaled turn is one further than the last (or the same, for a steering checkpoint).
          const turns = run.checkpoints.map((state) => state.turn);
          expect(turns).toEqual([...turns].sort((a, b) => a - b));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('the soft-landing note is due on exactly one turn of any step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), (maxTurns) => {
        const due = Array.from({ length: maxTurns }, (_, turn) => softLandingNote(turn, maxTurns)).filter(
          Boolean,
        );
        expect(due).toHaveLength(1);
      }),
    );
  });
});

function ids(frames: SseFrame[], type: string): string[] {
  return frames
    .filter((frame) => frame.type === type)
    .map((frame) => (frame as { tool_call_id: string }).tool_call_id);
}
