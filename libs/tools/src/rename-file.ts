import { findFileByTitle, lockFile, type ProjectFile, withRunFence } from '@quill/db';
import { setFileTitle } from '@quill/db/workers';
import { z } from 'zod';
import { failure, fenceOf, ok, type ToolSpec } from './types.ts';

const RenameFileArgs = z.strictObject({
  id: z.uuid(),
  new_title: z.string().trim().min(1).max(200),
});

type RenameOutcome =
  | { kind: 'not_found' }
  | { kind: 'stale'; file: ProjectFile; seenVersion: number }
  | { kind: 'duplicate'; file: ProjectFile; other: ProjectFile }
  | { kind: 'renamed'; file: ProjectFile };

/** Seed 000: rename_file changes only the title; id and text stay, same-folder duplicates are refused. */
export const renameFileTool: ToolSpec<typeof RenameFileArgs> = {
  name: 'rename_file',
  description:
    'Change a file’s title only (its id and text stay). Refused when the folder already has that title.',
  parameters: RenameFileArgs,
  writesFiles: true,
  async handle(args, context) {
    const seen = context.state.readSnapshots.get(args.id);
    const outcome = await withRunFence(
      context.pool,
      fenceOf(context),
      async (client): Promise<RenameOutcome> => {
        const file = await lockFile(client, context.projectId, args.id);
        if (!file) return { kind: 'not_found' };
        // The author may have renamed or rewritten it since: their title is not the AI's to replace.
        if (seen && seen.version !== file.version) return { kind: 'stale', file, seenVersion: seen.version };
        const other = await findFileByTitle(client, context.projectId, file.folder, args.new_title);
        if (other && other.id !== file.id) return { kind: 'duplicate', file, other };
        if (file.title !== args.new_title) await setFileTitle(client, file.id, args.new_title);
        return { kind: 'renamed', file };
      },
    );
    if (outcome.kind === 'not_found')
      return failure('file_not_found', `No file with id ${args.id} in this project.`);
    if (outcome.kind === 'stale') {
      return failure(
        'stale_content',
        `“${outcome.file.title}” changed since you last saw it (version ${outcome.seenVersion} → ${outcome.file.version}; the author may be editing it). Nothing was renamed: read it again with query_files first.`,
      );
    }
    if (outcome.kind === 'duplicate') {
      return failure(
        'duplicate_title',
        `The folder already has a file titled “${args.new_title}” (id ${outcome.other.id}); choose another title.`,
      );
    }
    const pending = context.state.pendingFile;
    if (pending?.fileId === args.id) context.state.pendingFile = { ...pending, title: args.new_title };
    return ok(`Renamed “${outcome.file.title}” to “${args.new_title}”.`, {
      file_id: args.id,
      old_title: outcome.file.title,
      title: args.new_title,
    });
  },
};
