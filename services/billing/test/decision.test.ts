import { ERROR_CATALOG, ERROR_CODES, errorFrame, frame, WORKFLOW_STOPPED_REASONS } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { decideBilling, endingOf, STOP_RULES } from '../src/decision.ts';
import { analyzeRunOutput, PROSE_MIN_CHARS } from '../src/run-output.ts';
import {
  agentStart,
  complete,
  createEmptyFile,
  fileDelta,
  fileStart,
  messageEnd,
  prose,
  type Row,
  RUN,
  readFiles,
  refundableError,
  runOf,
  started,
  stopped,
  text,
  thinking,
  toolCall,
  toolResult,
  wroteChapter,
} from './decision-fixtures.ts';

const ROWS: Row[] = [
  // Normal completion: charged, whatever it produced.
  {
    name: 'completed with a chapter',
    frames: [...runOf(wroteChapter, [messageEnd('stop')]), complete],
    expected: ['charge', 'completed:completed'],
  },
  {
    name: 'paused to ask the author a question',
    frames: [
      ...runOf([frame('clarification_requested', RUN, { agent: 'writer', question: '主角叫什么？' })]),
      stopped('waiting_user'),
    ],
    expected: ['charge', 'waiting_user:completed'],
  },
  {
    name: 'completed with nothing',
    frames: [...runOf([messageEnd('stop')]), complete],
    expected: ['charge', 'completed:completed'],
  },

  // Author stop / client disconnect: refund without substantive output.
  {
    name: 'user stop, nothing emitted',
    frames: [...runOf(), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, thinking only',
    frames: [...runOf([thinking('让我想想这一章该怎么写……'.repeat(30))]), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, reads only',
    frames: [...runOf(readFiles), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, empty file only',
    frames: [...runOf(createEmptyFile), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, transitional narration',
    frames: [
      ...runOf([text('好的，我先创建第一章的草稿文件，然后写正文。')], createEmptyFile),
      stopped('user_stopped'),
    ],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, prose just under PROSE_MIN_CHARS',
    frames: [...runOf([prose(PROSE_MIN_CHARS - 1), messageEnd('stop')]), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, prose at PROSE_MIN_CHARS',
    frames: [...runOf([prose(PROSE_MIN_CHARS), messageEnd('stop')]), stopped('user_stopped')],
    expected: ['charge', 'user_stopped:produced_output'],
  },
  {
    name: 'user stop, prose over PROSE_MIN_CHARS split across text frames',
    frames: [...runOf([prose(120), prose(120), messageEnd('stop')]), stopped('user_stopped')],
    expected: ['charge', 'user_stopped:produced_output'],
  },
  {
    name: 'user stop, short narrations split by tool calls never add up',
    frames: [
      ...runOf([prose(150)], readFiles, [prose(150)], readFiles, [prose(150)]),
      stopped('user_stopped'),
    ],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, two agents’ short texts are separate segments',
    frames: [...runOf([prose(150, 'planner'), prose(150, 'writer')]), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop, whitespace around short prose is not counted',
    frames: [...runOf([text(`\n\n${'字'.repeat(PROSE_MIN_CHARS - 1)}\n\n   `)]), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'user stop after a chapter was saved',
    frames: [...runOf(wroteChapter), stopped('user_stopped')],
    expected: ['charge', 'user_stopped:produced_output'],
  },
  {
    name: 'user stop after a write tool succeeded',
    writeToolNames: ['edit_file'],
    frames: [...runOf([toolCall('edit_file'), toolResult('edit_file')]), stopped('user_stopped')],
    expected: ['charge', 'user_stopped:produced_output'],
  },
  {
    name: 'user stop after a write tool failed',
    writeToolNames: ['edit_file'],
    frames: [...runOf([toolCall('edit_file'), toolResult('edit_file', 'error')]), stopped('user_stopped')],
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'disconnect, nothing emitted',
    frames: [...runOf([thinking('……')]), stopped('client_disconnected')],
    expected: ['refund', 'client_disconnected:no_output'],
  },
  {
    name: 'disconnect after a chapter was saved',
    frames: [...runOf(wroteChapter), stopped('client_disconnected')],
    expected: ['charge', 'client_disconnected:produced_output'],
  },

  // Wall-clock timeout: refund only without output and not mid-reply.
  {
    name: 'timeout while waiting on a tool',
    frames: [...runOf([text('我先查一下。')], [toolCall('query_files')]), stopped('wall_clock_timeout')],
    expected: ['refund', 'wall_clock_timeout:no_output'],
  },
  {
    name: 'timeout while thinking',
    frames: [...runOf([thinking('嗯……')]), stopped('wall_clock_timeout')],
    expected: ['refund', 'wall_clock_timeout:no_output'],
  },
  {
    name: 'timeout after a finished short reply',
    frames: [...runOf([text('好的。'), messageEnd('stop')]), stopped('wall_clock_timeout')],
    expected: ['refund', 'wall_clock_timeout:no_output'],
  },
  {
    name: 'timeout mid-reply (short text, no message_end)',
    frames: [...runOf([text('林晚推开门，')]), stopped('wall_clock_timeout')],
    expected: ['charge', 'wall_clock_timeout:mid_reply'],
  },
  {
    name: 'timeout mid-file body',
    frames: [
      ...runOf([toolCall('create_file'), toolResult('create_file'), fileStart, fileDelta]),
      stopped('wall_clock_timeout'),
    ],
    expected: ['charge', 'wall_clock_timeout:mid_reply'],
  },
  {
    name: 'timeout after output',
    frames: [...runOf(wroteChapter, [messageEnd('stop')]), stopped('wall_clock_timeout')],
    expected: ['charge', 'wall_clock_timeout:produced_output'],
  },
  {
    name: 'timeout: frames after the terminal do not make it mid-reply',
    frames: [...runOf([toolCall('query_files')]), stopped('wall_clock_timeout'), text('迟到的字')],
    expected: ['refund', 'wall_clock_timeout:no_output'],
  },
  {
    name: 'router run_timeout error mid-reply',
    frames: [...runOf([text('林晚推开门，')]), errorFrame(RUN, 'run_timeout')],
    expected: ['charge', 'run_timeout:mid_reply'],
  },
  {
    name: 'router run_timeout error, not mid-reply',
    frames: [...runOf([toolCall('query_files')]), errorFrame(RUN, 'run_timeout')],
    expected: ['refund', 'run_timeout:no_output'],
  },

  // Runaway stops: refund when no write succeeded; prose does not save them.
  {
    name: 'no_progress with long prose but no write',
    frames: [...runOf([prose(PROSE_MIN_CHARS * 3), messageEnd('stop')]), stopped('no_progress')],
    expected: ['refund', 'no_progress:no_write'],
  },
  {
    name: 'model_call_cap after a chapter was saved',
    frames: [...runOf(wroteChapter), stopped('model_call_cap')],
    expected: ['charge', 'model_call_cap:wrote_body'],
  },
  {
    name: 'tool_turns_exhausted with only an empty file',
    frames: [...runOf(createEmptyFile, readFiles), stopped('tool_turns_exhausted')],
    expected: ['refund', 'tool_turns_exhausted:no_write'],
  },
  {
    name: 'tool_turns_exhausted after a write tool succeeded',
    writeToolNames: ['edit_file'],
    frames: [...runOf([toolCall('edit_file'), toolResult('edit_file')]), stopped('tool_turns_exhausted')],
    expected: ['charge', 'tool_turns_exhausted:wrote_body'],
  },
  {
    name: 'collaboration_cap with no write',
    frames: [...runOf(readFiles), stopped('collaboration_cap')],
    expected: ['refund', 'collaboration_cap:no_write'],
  },

  // Errors.
  {
    name: 'error refundable:false after no output',
    frames: [...runOf(readFiles, [messageEnd('error')]), errorFrame(RUN, 'tool_failure_circuit_open')],
    expected: ['charge', 'tool_failure_circuit_open:not_refundable'],
  },
  {
    name: 'refundable error before any output',
    frames: [...runOf([messageEnd('error')]), refundableError],
    expected: ['refund', 'model_error:no_output'],
  },
  {
    name: 'refundable error after thinking and an empty file',
    frames: [...runOf([thinking('…')], createEmptyFile, [messageEnd('error')]), refundableError],
    expected: ['refund', 'model_error:no_output'],
  },
  {
    name: 'refundable error after output',
    frames: [...runOf(wroteChapter, [messageEnd('error')]), refundableError],
    expected: ['charge', 'model_error:produced_output'],
  },
  {
    name: 'refundable error while writing a reply',
    frames: [...runOf([text('林晚推开门，'), messageEnd('error')]), refundableError],
    expected: ['charge', 'model_error:mid_reply'],
  },
  {
    name: 'refundable error while streaming a file body',
    frames: [
      ...runOf([
        toolCall('create_file'),
        toolResult('create_file'),
        fileStart,
        fileDelta,
        messageEnd('error'),
      ]),
      refundableError,
    ],
    expected: ['charge', 'model_error:mid_reply'],
  },
  {
    name: 'refundable error after a finished short reply',
    frames: [
      ...runOf([text('好的。'), messageEnd('stop'), agentStart('planner'), messageEnd('error')]),
      refundableError,
    ],
    expected: ['refund', 'model_error:no_output'],
  },

  // Quill's own infrastructure failed: refunded whatever the run produced (README "Fault tolerance").
  {
    name: 'worker_lost after a chapter was written',
    frames: [...runOf(wroteChapter), errorFrame(RUN, 'worker_lost')],
    expected: ['refund', 'worker_lost:infrastructure'],
  },
  {
    name: 'internal_error while writing a reply',
    frames: [...runOf([text('林晚推开门，')]), errorFrame(RUN, 'internal_error')],
    expected: ['refund', 'internal_error:infrastructure'],
  },
  {
    name: 'context_unavailable before any output',
    frames: [...runOf([]), errorFrame(RUN, 'context_unavailable')],
    expected: ['refund', 'context_unavailable:infrastructure'],
  },
  {
    name: 'invalid_bus_message after output',
    frames: [...runOf(wroteChapter), errorFrame(RUN, 'invalid_bus_message')],
    expected: ['refund', 'invalid_bus_message:infrastructure'],
  },
  {
    name: 'storage_unavailable mid-chapter (the database stayed away past the write retries)',
    frames: [...runOf([text('林晚推开门，')]), errorFrame(RUN, 'storage_unavailable')],
    expected: ['refund', 'storage_unavailable:infrastructure'],
  },
  {
    name: 'empty_file_unwritten: the correction round brought no body and nothing else was written',
    frames: [...runOf([text('写好了。'), messageEnd('stop')]), errorFrame(RUN, 'empty_file_unwritten')],
    expected: ['refund', 'empty_file_unwritten:no_output'],
  },
  {
    name: 'service_unavailable reported with no terminal frame',
    frames: [started],
    outcome: { terminal: 'error', reason: 'service_unavailable' },
    expected: ['refund', 'service_unavailable:infrastructure'],
  },
  {
    name: 'the model provider failed after output: charged (not Quill infrastructure)',
    frames: [...runOf(wroteChapter, [messageEnd('error')]), errorFrame(RUN, 'model_unavailable')],
    expected: ['charge', 'model_unavailable:produced_output'],
  },

  // No terminal frame stored: the caller's outcome says how it ended.
  {
    name: 'launch failed before any frame',
    frames: [],
    outcome: { terminal: 'error', reason: 'launch_failed' },
    expected: ['refund', 'launch_failed:no_output'],
  },
  {
    name: 'only run_started, reported as stopped',
    frames: [started],
    outcome: { terminal: 'stopped', reason: 'user_stopped' },
    expected: ['refund', 'user_stopped:no_output'],
  },
  {
    name: 'no terminal frame, reported non-refundable error code',
    frames: [started],
    outcome: { terminal: 'error', reason: 'tool_failure_circuit_open' },
    expected: ['charge', 'tool_failure_circuit_open:not_refundable'],
  },
];

describe('decideBilling (docs/agent-behaviour.md 「流的终止、停止与计费」)', () => {
  it.each(ROWS)('$name → $expected', (row) => {
    const output = analyzeRunOutput(
      row.frames,
      row.writeToolNames ? { writeToolNames: row.writeToolNames } : {},
    );
    const ending = endingOf(output.terminal, row.outcome ?? { terminal: 'error', reason: 'internal_error' });
    const verdict = decideBilling(ending, output);
    expect([verdict.decision, verdict.reason]).toEqual(row.expected);
  });

  it('trusts the stored terminal frame over the reported outcome', () => {
    const frames = [...runOf([messageEnd('error')]), refundableError];
    const output = analyzeRunOutput(frames);
    const verdict = decideBilling(
      endingOf(output.terminal, { terminal: 'complete', reason: 'completed' }),
      output,
    );
    expect(verdict).toEqual({ decision: 'refund', reason: 'model_error:no_output', producedOutput: false });
  });

  it('reads refundable from the error frame itself', () => {
    const notRefundable = { ...refundableError, refundable: false };
    const output = analyzeRunOutput([...runOf([messageEnd('error')]), notRefundable]);
    expect(
      decideBilling(endingOf(output.terminal, { terminal: 'error', reason: 'model_error' }), output).decision,
    ).toBe('charge');
  });

  it('refunds exactly the catalog codes marked as infrastructure, whatever was produced', () => {
    const output = analyzeRunOutput(runOf(wroteChapter));
    for (const code of ERROR_CODES) {
      const verdict = decideBilling(endingOf(undefined, { terminal: 'error', reason: code }), output);
      const spec = ERROR_CATALOG[code];
      expect(verdict.decision, code).toBe(spec.infrastructure ? 'refund' : 'charge');
      // Every infrastructure failure is refundable by the catalog too (the error frame says so).
      if (spec.infrastructure) expect(spec.refundable, code).toBe(true);
    }
  });

  it('classifies every workflow_stopped reason', () => {
    for (const reason of WORKFLOW_STOPPED_REASONS) expect(STOP_RULES[reason], reason).toBeDefined();
  });
});

describe('analyzeRunOutput', () => {
  it('reports produced output, the longest prose segment and whether a reply was open', () => {
    const output = analyzeRunOutput([
      ...runOf([prose(30), toolCall('query_files'), prose(80)]),
      stopped('user_stopped'),
    ]);
    expect(output).toMatchObject({
      producedOutput: false,
      wroteBody: false,
      longestProseChars: 80,
      replyInProgress: true,
    });
    expect(output.terminal?.type).toBe('workflow_stopped');
  });
});
