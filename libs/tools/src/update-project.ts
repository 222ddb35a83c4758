import { agentBaseRev, getProjectWorkspace, type StateKey, withRunFence } from '@quill/db';
import { commitProjectNotes, commitState } from '@quill/db/workers';
import { z } from 'zod';
import { NOTES_MAX_CHARS, withProposals } from './project-notes.ts';
import { type BoardTask, doneEvidenceProblems, TaskBoard } from './task-board.ts';
import { failure, fenceOf, ok, type ToolResult, type ToolSpec } from './types.ts';

const ProjectInfo = z.strictObject({
  genre: z.string().trim().max(100).optional(),
  synopsis: z.string().trim().max(2000).optional(),
  style: z.string().trim().max(500).optional(),
  audience: z.string().trim().max(200).optional(),
  target_words: z.number().int().min(0).max(10_000_000).optional(),
});

const UpdateProjectArgs = z
  .strictObject({
    info: ProjectInfo.optional().describe('Project info to set (merged with what is stored).'),
    notes_proposals: z
      .string()
      .max(NOTES_MAX_CHARS)
      .optional()
      .describe('Your proposed notes: replaces only the AI-proposed section; the author’s entries stay.'),
    task_board: TaskBoard.optional().describe('The whole task board. A new done needs files written now.'),
    title: z.string().optional().describe('Not changeable by the agent: the project title is the author’s.'),
  })
  .refine(
    (args) => args.info || args.notes_proposals !== undefined || args.task_board || args.title !== undefined,
    'give info, notes_proposals or task_board',
  );

/** A stale write the merge could not take: nothing of the call is saved. */
class StateConflict extends Error {
  readonly result: ToolResult;
  constructor(result: ToolResult) {
    super('state_conflict');
    this.result = result;
  }
}

type UpdateOutcome =
  | { kind: 'missing' }
  | { kind: 'refused'; result: ToolResult }
  | { kind: 'saved'; notesChars: number; tasks: number };

export const updateProjectTool: ToolSpec<typeof UpdateProjectArgs> = {
  name: 'update_project',
  description:
    'Update project info, propose notes (the author confirms them), or save the task board. File tasks declare artifact_file_type (and artifact_refs / unit_spec); a task marked done must be backed by non-empty files of that type written in this request, or the board is not saved.',
  parameters: UpdateProjectArgs,
  writesFiles: false,
  async handle(args, context) {
    if (args.title !== undefined) {
      return failure(
        'project_title_protected',
        'The project title is the author’s own; it is never renamed from chat. Nothing was changed.',
      );
    }
    const outcome = await withRunFence(
      context.pool,
      fenceOf(context),
      async (client): Promise<UpdateOutcome> => {
        const stored = await getProjectWorkspace(client, context.projectId, { lock: true });
        if (!stored) return { kind: 'missing' };
        let notes: string | undefined;
        if (args.notes_proposals !== undefined) {
          const merged = withProposals(stored.notes, args.notes_proposals);
          if (merged.over > 0) {
            return {
              kind: 'refused',
              result: failure(
                'notes_too_long',
                `Notes share ${NOTES_MAX_CHARS} chars with the author’s entries; shorten your proposals by ${merged.over} chars.`,
              ),
            };
          }
          notes = merged.notes;
        }
        const board: BoardTask[] | undefined = args.task_board;
        if (board) {
          const problems = await doneEvidenceProblems(
            client,
            context.projectId,
            stored.taskBoard,
            board,
            context.state.writtenFileIds,
          );
          if (problems.length > 0) {
            return {
              kind: 'refused',
              result: failure(
                'done_without_evidence',
                `The task board was not saved: ${problems.join('; ')}.`,
              ),
            };
          }
        }
        // Notes are committed with their rev through the one state path (docs/kernel.md "Commits
        // with rev"); the row is locked above, so the rev read is the one that stands.
        if (notes !== undefined && notes !== stored.notes) {
          await commitProjectNotes(client, {
            projectId: context.projectId,
            baseRev: stored.notesRev,
            value: notes,
            writer: { kind: 'agent', role: context.role, runId: context.runId },
          });
        }
        // Info and the task board too, each based on the rev this run last saw (its own last
        // commit, else the run's start), so a change the author made meanwhile is merged per key
        // or per task, or the write is refused — never overwritten.
        const writer = { kind: 'agent' as const, role: context.role, runId: context.runId };
        const commit = async (key: StateKey, value: Record<string, unknown> | unknown[]) => {
          const baseRev = await agentBaseRev(client, {
            projectId: context.projectId,
            key,
            runId: context.runId,
          });
          return commitState(client, { projectId: context.projectId, key, baseRev, value, writer });
        };
        let tasks = stored.taskBoard.length;
        for (const [key, value] of [
          ['info', args.info ? { ...stored.info, ...args.info } : undefined],
          ['task_board', board],
        ] as const) {
          if (value === undefined) continue;
          const outcome = await commit(key, value);
          if (outcome.kind === 'conflict') {
            // Thrown, not returned: the transaction rolls back what this call committed before.
            throw new StateConflict(
              failure(
                'state_conflict',
                `The author changed ${outcome.conflicts.join(', ')} while you worked; nothing was saved. ` +
                  `What stands now (rev ${outcome.rev}): ${JSON.stringify(outcome.value)}. Build on it and send again.`,
              ),
            );
          }
          if (outcome.kind === 'committed' && key === 'task_board')
            tasks = (outcome.value as unknown[]).length;
        }
        return { kind: 'saved', notesChars: (notes ?? stored.notes).length, tasks };
      },
    ).catch((error: unknown): UpdateOutcome => {
      if (error instanceof StateConflict) return { kind: 'refused', result: error.result };
      throw error;
    });
    if (outcome.kind === 'missing') return failure('project_not_found', 'The project no longer exists.');
    if (outcome.kind === 'refused') return outcome.result;
    const parts = [
      args.info && 'info',
      args.notes_proposals !== undefined && 'notes',
      args.task_board && 'task board',
    ];
    return ok(`Updated the project ${parts.filter(Boolean).join(', ')}.`, {
      notes_chars: outcome.notesChars,
      tasks: outcome.tasks,
    });
  },
};
