import { getFile, listFiles } from '@quill/db';
import { z } from 'zod';
import { failure, ok, type ToolSpec } from './types.ts';

const QueryFilesArgs = z.strictObject({
  id: z.uuid().optional(),
  query: z.string().trim().max(200).optional(),
});

export const queryFilesTool: ToolSpec<typeof QueryFilesArgs> = {
  name: 'query_files',
  description: 'List the project files (optionally filtered by a title query), or read one file by id.',
  parameters: QueryFilesArgs,
  writesFiles: false,
  async handle(args, context) {
    if (args.id) {
      const file = await getFile(context.pool, context.projectId, args.id);
      if (!file) return failure('file_not_found', `No file with id ${args.id} in this project.`);
      return ok(`Read “${file.title}” (${file.content.length} chars).`, {
        id: file.id,
        title: file.title,
        file_type: file.fileType,
        range: `0-${file.content.length} of ${file.content.length}`,
        content: file.content,
      });
    }
    const files = await listFiles(context.pool, context.projectId);
    const needle = args.query?.toLowerCase();
    const matches = needle ? files.filter((file) => file.title.toLowerCase().includes(needle)) : files;
    return ok(`${matches.length} file(s).`, {
      files: matches.map((file) => ({
        id: file.id,
        title: file.title,
        file_type: file.fileType,
        chars: file.content.length,
      })),
    });
  },
};
