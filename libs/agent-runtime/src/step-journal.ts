import { AgentRole, ChatMessage, FileWrite, StepResult } from '@quill/contracts';
import { getFileVersion, loadStepJournal, type Queryable } from '@quill/db';
import { saveStepJournal } from '@quill/db/workers';
import type { ToolRunState } from '@quill/tools';
import { z } from 'zod';

/**
 * A step's progress, so the worker that takes a redelivered step continues where the last one
 * stood instead of redoing it (docs/ai-writes.md, "Redelivery"). It is written inside the run's
 * write fence after every model turn and in the same transaction as every body save: whatever a
 * journal says was saved was saved, and nothing saved is missing from it.
 *
 * What it keeps: the step's own transcript (after the task's messages and directive), counters,
 * the files written, the tools' view of files (versions only; the text is read back from the
 * version rows), the chat-hold and continuation state, and the SSE id of the newest frame that
 * stands. The tool-failure breaker and no-progress guard restart empty on a takeover.
 */
const PendingFileJson = z.object({
  fileId: z.string(),
  title: z.string(),
  fileType: z.string(),
  folder: z.string().optional(),
  baseVersion: z.number().int(),
});

const Snapshot = z.object({
  file_id: z.string(),
  version: z.number().int(),
  full: z.boolean(),
  promoted: z.boolean(),
});

export const StepJournalSchema = z.object({
  v: z.literal(1),
  role: AgentRole,
  /** Model turns finished; the next one to run. */
  turn: z.number().int().nonnegative(),
  /** The last reply had no tool calls to answer: the loop is over, only the step's end remains. */
  loop_done: z.boolean(),
  messages: z.array(ChatMessage),
  model_calls: z.number().int().nonnegative(),
  tool_calls: z.number().int().nonnegative(),
  files_written: z.array(FileWrite),
  final_text: z.string(),
  finish_reason: z.string(),
  pending_file: PendingFileJson.optional(),
  snapshots: z.array(Snapshot),
  read_log: z.array(z.tuple([z.string(), z.number().int()])),
  written_file_ids: z.array(z.string()),
  handoff: z.object({ to_agent: AgentRole, reason: z.string() }).optional(),
  clarification: z.object({ question: z.string() }).optional(),
  hold: z.object({
    holding: z.boolean(),
    held: z.string(),
    last: z.enum(['file', 'text', 'tool']).optional(),
  }),
  continuations_used: z.number().int().nonnegative(),
  open_capture: z.object({ file: PendingFileJson, body: z.string() }).optional(),
  /** Files whose empty-file correction round already ran. */
  corrected: z.array(z.string()),
  /** Writes saved but not yet announced with `file_saved` (a save the last worker died after). */
  unannounced: z.array(FileWrite),
  valid_through_id: z.number().int().nonnegative(),
  /** Set once the step has its result: a takeover only publishes it again. */
  result: StepResult.optional(),
});
export type StepJournalData = z.infer<typeof StepJournalSchema>;

export async function readStepJournal(
  db: Queryable,
  runId: string,
  step: number,
): Promise<StepJournalData | 'invalid' | null> {
  const raw = await loadStepJournal(db, runId, step);
  if (raw === null) return null;
  const parsed = StepJournalSchema.safeParse(raw);
  return parsed.success ? parsed.data : 'invalid';
}

export async function writeStepJournal(
  db: Queryable,
  runId: string,
  step: number,
  journal: StepJournalData,
): Promise<void> {
  await saveStepJournal(db, runId, step, journal);
}

/** The tools' state as the journal keeps it. */
export function toolStateToJournal(
  state: ToolRunState,
): Pick<
  StepJournalData,
  'pending_file' | 'snapshots' | 'read_log' | 'written_file_ids' | 'handoff' | 'clarification'
> {
  const snapshots = [
    ...[...state.readSnapshots].map(([fileId, snapshot]) => ({
      file_id: fileId,
      version: snapshot.version,
      full: snapshot.full,
      promoted: true,
    })),
    ...[...state.pendingReads].map(([fileId, snapshot]) => ({
      file_id: fileId,
      version: snapshot.version,
      full: snapshot.full,
      promoted: false,
    })),
  ];
  return {
    ...(state.pendingFile ? { pending_file: state.pendingFile } : {}),
    snapshots,
    read_log: [...state.readLog],
    written_file_ids: [...state.writtenFileIds],
    ...(state.handoff ? { handoff: state.handoff } : {}),
    ...(state.clarification ? { clarification: state.clarification } : {}),
  };
}

/**
 * Puts the journal's tool state back. A snapshot's text is read from its version row (version 0
 * is the empty file); one whose row is gone is dropped, so the tool treats the file as unread.
 */
export async function restoreToolState(
  db: Queryable,
  state: ToolRunState,
  journal: StepJournalData,
): Promise<void> {
  state.pendingFile = journal.pending_file;
  state.handoff = journal.handoff;
  state.clarification = journal.clarification;
  for (const id of journal.written_file_ids) state.writtenFileIds.add(id);
  for (const [key, version] of journal.read_log) state.readLog.set(key, version);
  const contents = await Promise.all(
    journal.snapshots.map(async (snapshot) =>
      snapshot.version === 0 ? '' : (await getFileVersion(db, snapshot.file_id, snapshot.version))?.content,
    ),
  );
  journal.snapshots.forEach((snapshot, index) => {
    const content = contents[index];
    if (content === undefined) return;
    const target = snapshot.promoted ? state.readSnapshots : state.pendingReads;
    target.set(snapshot.file_id, { version: snapshot.version, content, full: snapshot.full });
  });
}
