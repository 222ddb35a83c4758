import { createFile, withRunFence } from '@quill/db';
import { z } from 'zod';
import { ok, type ToolSpec } from './types.ts';

export const FILE_TYPES = ['draft', 'outline', 'character', 'setting', 'note', 'script'] as const;

const CreateFileArgs = z.strictObject({
  title: z.string().trim().min(1).max(200),
  file_type: z.enum(FILE_TYPES),
  folder: z.string().trim().max(200).optional(),
});

export const createFileTool: ToolSpec<typeof CreateFileArgs> = {
  name: 'create_file',
  description:
    'Create a new, empty project file. Write its body in your NEXT reply, starting with <file> and ending with </file>.',
  parameters: CreateFileArgs,
  writesFiles: true,
  async handle(args, context) {
    const file = await withRunFence(context.pool, { runId: context.runId, epoch: context.epoch }, (client) =>
      createFile(client, {
        projectId: context.projectId,
        title: args.title,
        fileType: args.file_type,
        folder: args.folder ?? '',
      }),
    );
    context.state.pendingFile = { fileId: file.id, title: file.title, fileType: file.fileType };
    return ok(`Created empty file “${file.title}”.`, {
      file_id: file.id,
      title: file.title,
      file_type: file.fileType,
      next_step: 'Now write the full body in your next reply inside <file> … </file>.',
    });
  },
};
