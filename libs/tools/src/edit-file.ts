import { findAiWrite, lockFile, type ProjectFile, withRunFence } from '@quill/db';
import { recordAiArtifact, saveFileContent } from '@quill/db/workers';
import { z } from 'zod';
import { authorEditsSinceAi, touchesAuthorEdits } from './author-changes.ts';
import { failure, fenceOf, ok, recordOwnWrite, type ToolResult, type ToolSpec, writeKeyOf } from './types.ts';

const EditFileArgs = z
  .strictObject({
    id: z.uuid(),
    operation: z.enum(['replace', 'insert', 'append', 'delete']),
    old_text: z.string().min(1).optional().describe('replace / delete: the exact text, found once.'),
    new_text: z.string().optional().describe('replace / insert / append: the text to put in.'),
    anchor: z.string().min(1).optional().describe('insert: exact text (found once) to insert next to.'),
    position: z
      .enum(['before', 'after'])
      .optional()
      .describe('insert: before or after anchor (default after).'),
  })
  .superRefine((args, issues) => {
    const need = (field: 'old_text' | 'new_text' | 'anchor') => {
      if (args[field] === undefined) {
        issues.addIssue({ code: 'custom', path: [field], message: `${args.operation} needs ${field}` });
      }
    };
    const required = {
      replace: ['old_text', 'new_text'],
      delete: ['old_text'],
      insert: ['anchor', 'new_text'],
      append: ['new_text'],
    } as const;
    for (const field of required[args.operation]) need(field);
  });
type EditFileArgs = z.infer<typeof EditFileArgs>;

/** Where an edit lands in the current text and what it becomes. */
interface PlannedEdit {
  start: number;
  end: number;
  insert: string;
}

type EditOutcome =
  | { kind: 'not_found' }
  | { kind: 'stale'; file: ProjectFile; readVersion: number }
  | { kind: 'refused'; result: ToolResult }
  | { kind: 'saved'; file: ProjectFile; version: number; content: string; touched: boolean; at: number };

export const editFileTool: ToolSpec<typeof EditFileArgs> = {
  name: 'edit_file',
  description:
    'Edit a file precisely: replace or delete old_text (exact, found once), insert new_text before/after an exact anchor, or append new_text at the end. Fails with stale_content when the file changed since you last read it.',
  parameters: EditFileArgs,
  writesFiles: true,
  async handle(args, context) {
    const seen = context.state.readSnapshots.get(args.id);
    const writeKey = writeKeyOf(context);
    const outcome = await withRunFence(
      context.pool,
      fenceOf(context),
      async (client): Promise<EditOutcome> => {
        // Locked until commit: the author's save cannot slip in between the compare and the write.
        const file = await lockFile(client, context.projectId, args.id);
        if (!file) return { kind: 'not_found' };
        // This very call already committed (a retry after an unknown commit, a redone step).
        const done = writeKey ? await findAiWrite(client, writeKey) : null;
        if (done?.fileId === file.id) {
          return { kind: 'saved', file, version: done.version, content: file.content, touched: false, at: 0 };
        }
        if (seen && seen.content !== file.content) {
          return { kind: 'stale', file, readVersion: seen.version };
        }
        const planned = planEdit(file.content, args);
        if ('error' in planned) return { kind: 'refused', result: planned.error };
        const content =
          file.content.slice(0, planned.start) + planned.insert + file.content.slice(planned.end);
        const edits = await authorEditsSinceAi(client, file);
        const version = await saveFileContent(client, {
          fileId: file.id,
          projectId: context.projectId,
          content,
          source: 'ai',
          runId: context.runId,
          ...(writeKey ? { writeKey } : {}),
        });
        // An edit is an artifact version of the file too (docs/kernel.md "Artifacts and acceptance").
        await recordAiArtifact(client, {
          projectId: context.projectId,
          runId: context.runId,
          writeKey,
          fileId: file.id,
          textFileId: file.id,
          placement: 'in_file',
          version,
          baseVersion: file.version,
        });
        const touched = touchesAuthorEdits(edits, planned.start, planned.end);
        return { kind: 'saved', file, version, content, touched, at: planned.start };
      },
    );
    if (outcome.kind === 'not_found')
      return failure('file_not_found', `No file with id ${args.id} in this project.`);
    if (outcome.kind === 'refused') return outcome.result;
    if (outcome.kind === 'stale') {
      return failure(
        'stale_content',
        `“${outcome.file.title}” changed since you read it (version ${outcome.readVersion} → ${outcome.file.version}; the author may be editing it). Nothing was changed: read it again with query_files and redo the edit on the current text.`,
      );
    }
    const { file, version, content, touched } = outcome;
    recordOwnWrite(context.state, file.id, version, content);
    if (context.state.pendingFile?.fileId === file.id && content !== '')
      context.state.pendingFile = undefined;
    return ok(`Edited “${file.title}” (${args.operation}): ${content.length} chars, version ${version}.`, {
      file_id: file.id,
      title: file.title,
      version,
      chars: content.length,
      operation: args.operation,
      author_edits_touched: touched,
      ...(touched ? { note: 'This edit changed a passage the author wrote; mention it to the author.' } : {}),
    });
  },
};

function planEdit(content: string, args: EditFileArgs): PlannedEdit | { error: ToolResult } {
  if (args.operation === 'append') {
    const text = args.new_text ?? '';
    const separator = content !== '' && !content.endsWith('\n') && !text.startsWith('\n') ? '\n' : '';
    return { start: content.length, end: content.length, insert: separator + text };
  }
  const target = args.operation === 'insert' ? args.anchor! : args.old_text!;
  const at = findOnce(content, target);
  if (typeof at !== 'number') return { error: at };
  if (args.operation === 'insert') {
    const point = args.position === 'before' ? at : at + target.length;
    return { start: point, end: point, insert: args.new_text ?? '' };
  }
  return {
    start: at,
    end: at + target.length,
    insert: args.operation === 'delete' ? '' : (args.new_text ?? ''),
  };
}

function findOnce(content: string, target: string): number | ToolResult {
  const first = content.indexOf(target);
  if (first === -1) {
    return failure(
      'text_not_found',
      'That exact text is not in the file; read it again and copy the text exactly.',
    );
  }
  if (content.indexOf(target, first + 1) !== -1) {
    return failure(
      'ambiguous_match',
      'That text occurs more than once; include more surrounding text so it is unique.',
    );
  }
  return first;
}
