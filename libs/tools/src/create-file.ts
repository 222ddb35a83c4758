import { findFileByTitle, type ProjectFile, withRunFence } from '@quill/db';
import { createFile } from '@quill/db/workers';
import { z } from 'zod';
import {
  failure,
  fenceOf,
  ok,
  type PendingFile,
  recordOwnWrite,
  type ToolResult,
  type ToolSpec,
} from './types.ts';

export const FILE_TYPES = ['draft', 'outline', 'character', 'setting', 'note', 'script'] as const;

const CreateFileArgs = z.strictObject({
  title: z.string().trim().min(1).max(200),
  file_type: z.enum(FILE_TYPES),
  folder: z.string().trim().max(200).optional(),
});

const NEXT_STEP = 'End this reply now. In your NEXT reply write the full body inside <file> … </file>.';

type Created =
  | { kind: 'created' | 'reused'; file: ProjectFile }
  | { kind: 'protected' | 'type_clash'; file: ProjectFile };

export const createFileTool: ToolSpec<typeof CreateFileArgs> = {
  name: 'create_file',
  description:
    'Create a new, empty project file (a same-name file in the same folder is reused). Then end this reply; write the body in your NEXT reply, starting with <file> and ending with </file>. One file at a time.',
  parameters: CreateFileArgs,
  writesFiles: true,
  async handle(args, context) {
    const folder = args.folder ?? '';
    const pending = context.state.pendingFile;
    if (pending) return blockedByPending(pending, args.title, folder);
    const outcome = await withRunFence(context.pool, fenceOf(context), async (client): Promise<Created> => {
      const existing = await findFileByTitle(client, context.projectId, folder, args.title);
      if (!existing) {
        const file = await createFile(client, {
          projectId: context.projectId,
          title: args.title,
          fileType: args.file_type,
          folder,
        });
        return { kind: 'created', file };
      }
      // A file the author saved is theirs: chat never overwrites it whole (docs/agent-behaviour.md 受保护稿件).
      if (existing.authorSaved) return { kind: 'protected', file: existing };
      if (existing.fileType !== args.file_type) return { kind: 'type_clash', file: existing };
      return { kind: 'reused', file: existing };
    });
    const { file } = outcome;
    if (outcome.kind === 'protected') {
      return failure(
        'protected_manuscript',
        `“${file.title}” (id ${file.id}) holds text the author saved, so it cannot be overwritten from chat. Change it with edit_file, or create a file with another title.`,
      );
    }
    if (outcome.kind === 'type_clash') {
      return failure(
        'duplicate_title',
        `“${file.title}” already exists in this folder as a ${file.fileType} file (id ${file.id}); choose another title.`,
      );
    }
    context.state.pendingFile = {
      fileId: file.id,
      title: file.title,
      fileType: file.fileType,
      folder,
      baseVersion: file.version,
    };
    if (outcome.kind === 'created') recordOwnWrite(context.state, file.id, file.version, file.content);
    return ok(
      outcome.kind === 'created'
        ? `Created empty file “${file.title}”.`
        : `Reusing “${file.title}”; your next <file> body replaces its ${file.content.length} chars.`,
      {
        file_id: file.id,
        title: file.title,
        file_type: file.fileType,
        folder,
        ...(outcome.kind === 'reused' ? { reused: true, current_chars: file.content.length } : {}),
        next_step: NEXT_STEP,
      },
    );
  },
};

/**
 * One file streams at a time (docs/agent-behaviour.md 「重复建挡路的空文件」): asking again for the file that is
 * waiting for its body returns that file; any other file waits until it is written.
 */
function blockedByPending(pending: PendingFile, title: string, folder: string): ToolResult {
  if (pending.title === title && (pending.folder ?? '') === folder) {
    return ok(`“${pending.title}” already exists and is still empty.`, {
      file_id: pending.fileId,
      title: pending.title,
      file_type: pending.fileType,
      folder,
      content: '',
      next_step: NEXT_STEP,
    });
  }
  return failure(
    'pending_empty_file_unwritten',
    `“${pending.title}” (id ${pending.fileId}) is still empty. Write its body first: end this reply and start the next one with <file>; then create the next file.`,
  );
}
