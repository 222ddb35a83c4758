import type { BodyPartialReason, ChatMessage, FileWrite, StepResult, TaskEnvelope } from '@quill/contracts';
import { type RunFence, saveAiBody, withRunFence } from '@quill/db';
import type { PendingFile, ToolRunState } from '@quill/tools';
import type { Pool } from 'pg';
import type { ChatHoldEmitter } from './chat-hold.ts';
import type { EmptyFileRound } from './empty-file-round.ts';
import type { ContinuationTracker } from './output-continuation.ts';
import { type StepJournalData, toolStateToJournal, writeStepJournal } from './step-journal.ts';

export type StepBase = Omit<StepResult, 'outcome' | 'stop_reason'>;

/**
 * Where a step stands, and the two ways that is made durable (docs/ai-writes.md): `checkpoint`
 * after a finished model turn, and `saveFileBody`, which saves a body compare-and-set and records
 * it in the journal in the same transaction. The loop in step-runner.ts moves the fields; this
 * module only turns them into journal rows.
 */
export interface StepProgress {
  /** The model turn in progress (or next). */
  turn: number;
  /** The last reply needs no answer: only the step's end remains. */
  loopDone: boolean;
  finishReason: string;
  /** The SSE id of the newest frame that stands. */
  validThroughId: number;
  /** Saved but not yet announced with `file_saved` (a takeover announces them). */
  unannounced: FileWrite[];
  /** A model call is streaming (a body saved now ends its reply in the journal). */
  inModelCall: boolean;
  readonly messages: ChatMessage[];
  readonly base: StepBase;
  snapshot(overrides?: Partial<StepJournalData>): StepJournalData;
  /** Everything so far stands: the frames are stored, then the journal is. */
  checkpoint(overrides?: Partial<StepJournalData>): Promise<void>;
  saveFileBody(
    file: PendingFile,
    body: string,
    partialReason?: BodyPartialReason,
    replyText?: string,
  ): Promise<FileWrite>;
}

export function createStepProgress(parts: {
  pool: Pool;
  fence: RunFence;
  task: TaskEnvelope;
  journal: StepJournalData | null;
  /** The task's messages and the role directive: the journal keeps only what follows them. */
  prefixLength: number;
  messages: ChatMessage[];
  base: StepBase;
  state: ToolRunState;
  emitter: ChatHoldEmitter;
  continuation: ContinuationTracker;
  correction: EmptyFileRound;
}): StepProgress {
  const { pool, fence, task, journal, prefixLength, messages, base, state, emitter } = parts;
  const runId = task.run_id;
  const progress: StepProgress = {
    turn: journal?.turn ?? 0,
    loopDone: journal?.loop_done ?? false,
    finishReason: journal?.finish_reason ?? 'stop',
    validThroughId: journal?.valid_through_id ?? 0,
    unannounced: [],
    inModelCall: false,
    messages,
    base,
    snapshot(overrides = {}) {
      const open = parts.continuation.snapshot();
      return {
        v: 1,
        role: task.role,
        turn: progress.turn,
        loop_done: progress.loopDone,
        messages: messages.slice(prefixLength),
        model_calls: base.model_calls,
        tool_calls: base.tool_calls,
        files_written: base.files_written,
        final_text: base.final_text,
        finish_reason: progress.finishReason,
        ...toolStateToJournal(state),
        hold: emitter.snapshot(),
        continuations_used: open.used,
        ...(open.open ? { open_capture: open.open } : {}),
        corrected: [...parts.correction.corrected],
        unannounced: progress.unannounced,
        valid_through_id: progress.validThroughId,
        ...overrides,
      };
    },
    async checkpoint(overrides = {}) {
      progress.validThroughId = await emitter.settle();
      await withRunFence(pool, fence, (client) =>
        writeStepJournal(client, runId, task.step, progress.snapshot(overrides)),
      );
    },
    async saveFileBody(file, body, partialReason, replyText = '') {
      progress.validThroughId = await emitter.settle();
      const writeKey = `${runId}:s${task.step}:t${progress.turn}:body:${file.fileId}`;
      return withRunFence(pool, fence, async (client) => {
        const saved = await saveAiBody(client, {
          projectId: task.project_id,
          fileId: file.fileId,
          baseVersion: file.baseVersion,
          content: body,
          runId,
          writeKey,
          partialReason: partialReason ?? null,
        });
        const write: FileWrite = {
          file_id: saved.fileId,
          title: saved.title,
          file_type: saved.fileType,
          version: saved.version,
          body_chars: body.length,
          ...(saved.kind === 'drafted'
            ? {
                draft_of: { file_id: saved.draftOf.fileId, title: saved.draftOf.title },
                draft_reason: saved.reason,
              }
            : {}),
          ...(partialReason ? { partial_reason: partialReason } : {}),
        };
        await writeStepJournal(client, runId, task.step, journalAfterBody(write, body, replyText));
        return write;
      });
    },
  };

  /**
   * The journal as if the reply had ended at `</file>`; outside a model call (a body left open
   * by a cut reply, saved after the loop) the transcript and counters are already right.
   */
  function journalAfterBody(write: FileWrite, body: string, replyText: string): StepJournalData {
    const tools = toolStateToJournal(state);
    const snapshots = [
      ...tools.snapshots.filter((snapshot) => snapshot.file_id !== write.file_id),
      { file_id: write.file_id, version: write.version, full: true, promoted: true },
    ];
    const inCall = progress.inModelCall;
    return {
      ...progress.snapshot(),
      ...tools,
      pending_file: undefined,
      snapshots,
      written_file_ids: [...new Set([...tools.written_file_ids, write.file_id])],
      turn: inCall ? progress.turn + 1 : progress.turn,
      loop_done: true,
      ...(inCall
        ? {
            messages: [
              ...messages.slice(prefixLength),
              { role: 'assistant' as const, content: `${replyText}<file>\n${body}\n</file>` },
            ],
            model_calls: base.model_calls + 1,
            final_text: base.final_text + replyText,
          }
        : {}),
      files_written: [...base.files_written, write],
      unannounced: [write],
    };
  }

  return progress;
}
