import { lockFile, lockFilesUnderFolder, type ProjectFile, withRunFence } from '@quill/db';
import { softDeleteFiles } from '@quill/db/workers';
import { z } from 'zod';
import { failure, fenceOf, ok, type ToolSpec } from './types.ts';

const DeleteFileArgs = z
  .strictObject({
    id: z.uuid().optional().describe('The file to delete.'),
    folder: z.string().trim().min(1).max(200).optional().describe('Delete a whole folder (needs recursive).'),
    recursive: z.boolean().optional().describe('With folder: also every folder below it.'),
  })
  .superRefine((args, issues) => {
    if ((args.id === undefined) === (args.folder === undefined)) {
      issues.addIssue({ code: 'custom', path: ['id'], message: 'give either id or folder' });
    }
    if (args.folder !== undefined && args.recursive !== true) {
      issues.addIssue({
        code: 'custom',
        path: ['recursive'],
        message: 'deleting a folder needs recursive: true',
      });
    }
  });

type DeleteOutcome =
  | { kind: 'not_found' }
  | { kind: 'stale'; files: ProjectFile[] }
  | { kind: 'protected'; files: ProjectFile[] }
  | { kind: 'deleted'; files: ProjectFile[] };

export const deleteFileTool: ToolSpec<typeof DeleteFileArgs> = {
  name: 'delete_file',
  description:
    'Delete a file by id, or a folder with everything below it (folder + recursive: true). Files whose text the author saved cannot be deleted from chat.',
  parameters: DeleteFileArgs,
  writesFiles: true,
  async handle(args, context) {
    const outcome = await withRunFence(
      context.pool,
      fenceOf(context),
      async (client): Promise<DeleteOutcome> => {
        const single = args.id ? await lockFile(client, context.projectId, args.id) : null;
        const files = args.id
          ? single
            ? [single]
            : []
          : await lockFilesUnderFolder(client, context.projectId, args.folder!);
        if (files.length === 0) return { kind: 'not_found' };
        // Seed 000 受保护稿件: nothing the chat says (attachments, focus, naming the file, an
        // earlier offer) authorises deleting what the author saved; a folder goes all or nothing.
        const protectedFiles = files.filter((file) => file.authorSaved);
        if (protectedFiles.length > 0) return { kind: 'protected', files: protectedFiles };
        // Changed since the step last saw it (by the author or another run): not the AI's to drop.
        const moved = files.filter((file) => {
          const seen = context.state.readSnapshots.get(file.id);
          return seen !== undefined && seen.version !== file.version;
        });
        if (moved.length > 0) return { kind: 'stale', files: moved };
        await softDeleteFiles(
          client,
          context.projectId,
          files.map((file) => file.id),
        );
        return { kind: 'deleted', files };
      },
    );
    if (outcome.kind === 'not_found') {
      return failure(
        'file_not_found',
        args.id ? `No file with id ${args.id} in this project.` : `No files in folder “${args.folder}”.`,
      );
    }
    const titles = outcome.files.map((file) => `“${file.title}”`).join(', ');
    if (outcome.kind === 'stale') {
      return failure(
        'stale_content',
        `${titles} changed since you last saw them; nothing was deleted. Read them again with query_files first.`,
      );
    }
    if (outcome.kind === 'protected') {
      return failure(
        'protected_manuscript',
        `${titles} hold text the author saved and cannot be deleted from chat; nothing was deleted. The author can delete them from the file menu.`,
      );
    }
    for (const file of outcome.files) {
      context.state.readSnapshots.delete(file.id);
      context.state.pendingReads.delete(file.id);
      if (context.state.pendingFile?.fileId === file.id) context.state.pendingFile = undefined;
    }
    return ok(`Deleted ${titles}.`, {
      deleted: outcome.files.map((file) => ({ id: file.id, title: file.title, folder: file.folder })),
    });
  },
};
