import { findFilesByText, getFile, listFiles, type ProjectFile } from '@quill/db';
import { z } from 'zod';
import { authorEditsSinceAi } from './author-changes.ts';
import { FILE_TYPES } from './create-file.ts';
import {
  describeRange,
  isWholeText,
  MAX_READ_CHARS,
  sectionRange,
  type TextRange,
  tailRange,
  windowRange,
} from './file-ranges.ts';
import { failure, ok, sourced, type ToolContext, type ToolResult, type ToolSpec } from './types.ts';
import { visibleToRole } from './visibility.ts';

const QueryFilesArgs = z
  .strictObject({
    id: z.uuid().optional().describe('Read this file. Without id: list files, or search with query.'),
    query: z.string().trim().min(1).max(200).optional().describe('Search titles and text.'),
    file_type: z.enum(FILE_TYPES).optional().describe('List only files of this type.'),
    section: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('With id: read only this heading’s section.'),
    tail_chars: z
      .number()
      .int()
      .min(1)
      .max(MAX_READ_CHARS)
      .optional()
      .describe('With id: read the last N chars.'),
    start_char: z.number().int().min(0).optional().describe('With id: read from this character offset.'),
    max_chars: z.number().int().min(1).max(MAX_READ_CHARS).optional().describe('With id: at most N chars.'),
  })
  .superRefine((args, issues) => {
    const ranges = [args.section, args.tail_chars, args.start_char ?? args.max_chars].filter(
      (value) => value !== undefined,
    );
    if (ranges.length > 0 && !args.id) {
      issues.addIssue({ code: 'custom', path: ['id'], message: 'range reads need the file id' });
    }
    if (ranges.length > 1) {
      issues.addIssue({
        code: 'custom',
        path: ['section'],
        message: 'use one of section, tail_chars or start_char/max_chars',
      });
    }
  });
type QueryFilesArgs = z.infer<typeof QueryFilesArgs>;

const SNIPPET_RADIUS = 60;

export const queryFilesTool: ToolSpec<typeof QueryFilesArgs> = {
  name: 'query_files',
  description:
    'List or search the project files, or read one by id. Long files: read a heading with section, the end with tail_chars, or a window with start_char + max_chars; results state the range read.',
  parameters: QueryFilesArgs,
  writesFiles: false,
  parallelSafe: true,
  async handle(args, context) {
    if (args.id) return readFile(args.id, args, context);
    // Isolation: files this role may not see are neither listed nor found.
    const files = args.query
      ? (
          await visibleToRole(
            context,
            await findFilesByText(context.pool, context.projectId, args.query),
            (hit) => hit.file,
          )
        ).map((hit) => ({
          ...summary(hit.file),
          ...(hit.contentMatchAt >= 0 ? { snippet: snippet(hit.file.content, hit.contentMatchAt) } : {}),
        }))
      : (await visibleToRole(context, await listFiles(context.pool, context.projectId))).map(summary);
    const matches = args.file_type ? files.filter((file) => file.file_type === args.file_type) : files;
    // A search read the files' text to find them: its hits are sources; a plain listing is not.
    if (!args.query) return ok(`${matches.length} file(s).`, { files: matches });
    const sources = matches.map((file) => ({
      kind: 'file' as const,
      file_id: file.id,
      title: file.title,
      version: file.version,
      full: false,
    }));
    return sourced(`${matches.length} file(s).`, { files: matches }, sources);
  },
};

async function readFile(id: string, args: QueryFilesArgs, context: ToolContext): Promise<ToolResult> {
  const found = await getFile(context.pool, context.projectId, id);
  // A file hidden from this role (files.visibility) answers exactly like a missing one.
  const file = found && (await visibleToRole(context, [found]))[0];
  if (!file) return failure('file_not_found', `No file with id ${id} in this project.`);
  let range: TextRange;
  if (args.section) {
    const found = sectionRange(file.content, args.section);
    if (!('text' in found)) {
      const list = found.available.length ? found.available.join(' | ') : '(the file has no headings)';
      return failure('section_not_found', `No heading containing “${args.section}”. Headings: ${list}`);
    }
    range = found;
  } else if (args.tail_chars !== undefined) range = tailRange(file.content, args.tail_chars);
  else range = windowRange(file.content, args.start_char ?? 0, args.max_chars ?? MAX_READ_CHARS);

  // The same part of an unchanged file again is no progress (the repeat-read guard counts these).
  const readKey = [id, args.section, args.tail_chars, args.start_char, args.max_chars].join('|');
  if (context.state.readLog.get(readKey) === file.version) {
    return failure(
      'repeated_read',
      `You already read this part of “${file.title}” (version ${file.version}) in this step and it has not changed; use the text you have or read another part.`,
    );
  }
  context.state.readLog.set(readKey, file.version);

  const full = isWholeText(range);
  const seen = context.state.pendingReads.get(id) ?? context.state.readSnapshots.get(id);
  context.state.pendingReads.set(id, {
    version: file.version,
    content: file.content,
    // A range read refreshes the staleness snapshot but is not a read of the whole text.
    full: full || (seen?.full === true && seen.version === file.version),
  });
  const edits = full ? await authorEditsSinceAi(context.pool, file) : undefined;
  const source = {
    kind: 'file' as const,
    file_id: file.id,
    title: file.title,
    version: file.version,
    full,
    ...(full ? {} : { ranges: [describeRange(range)] }),
  };
  return sourced(
    `Read “${file.title}” (chars ${describeRange(range)}${full ? ', full text' : ''}).`,
    {
      ...summary(file),
      range: describeRange(range),
      full_text: full,
      content: range.text,
      ...(edits ? { author_edits: edits.rendered } : {}),
    },
    [source],
  );
}

function summary(file: ProjectFile) {
  return {
    id: file.id,
    title: file.title,
    folder: file.folder,
    file_type: file.fileType,
    version: file.version,
    chars: file.content.length,
    author_saved: file.authorSaved,
  };
}

function snippet(content: string, at: number): string {
  const start = Math.max(0, at - SNIPPET_RADIUS);
  const end = Math.min(content.length, at + SNIPPET_RADIUS);
  return `${start > 0 ? '…' : ''}${content.slice(start, end)}${end < content.length ? '…' : ''}`;
}
