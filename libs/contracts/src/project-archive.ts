import { z } from 'zod';
import { FileVisibilityBody } from './context.ts';
import { MAX_FILE_CHARS } from './http.ts';
import { int4, storableText } from './text.ts';

/**
 * A project as a zip (README "HTTP API", export and import): `manifest.json` (the project and
 * its files in order) and one Markdown file per project file, `files/<order>-<title>.md`, whose
 * YAML front matter carries title, type, folder and order; the body after it is the file's text,
 * byte for byte. Import reads it with the skill zip reader's safety rules and these limits.
 */
export const PROJECT_ZIP_LIMITS = {
  maxZipBytes: 20 * 1024 * 1024,
  maxEntries: 2000,
  // A file holds up to MAX_FILE_CHARS characters, up to 4 bytes each in UTF-8.
  maxEntryBytes: 4 * MAX_FILE_CHARS + 4096,
  maxTotalBytes: 100 * 1024 * 1024,
  maxCompressionRatio: 100,
  ratioMinBytes: 64 * 1024,
  maxPathLength: 255,
  maxPathDepth: 4,
} as const;

export const PROJECT_ARCHIVE_FORMAT = 'quill-project';
export const PROJECT_ARCHIVE_VERSION = 1;
export const PROJECT_MANIFEST_FILE = 'manifest.json';

const fileType = storableText().regex(/^[a-z][a-z_]{0,39}$/);
const folder = storableText().max(200);
const fileTitle = storableText().min(1).max(200);

export const ArchiveFrontMatter = z.strictObject({
  title: fileTitle,
  type: fileType,
  folder,
  order: int4().nonnegative(),
  visibility: FileVisibilityBody.shape.visibility.optional(),
  /** An AI draft (docs/ai-writes.md): the `order` of the file it was drafted for. */
  draft_of: int4().nonnegative().optional(),
  /**
   * The file's text is AI text the author has not accepted yet (docs/kernel.md "Artifacts and
   * acceptance"): its artifact's state. Informational: an import does not recreate the artifact.
   */
  acceptance: z.enum(['drafted', 'under_review', 'revision_requested']).optional(),
});
export type ArchiveFrontMatter = z.infer<typeof ArchiveFrontMatter>;

/**
 * Export options: `accepted_only=true` leaves out AI text the author has not accepted (an
 * unaccepted rewrite is exported with the text it replaced; AI drafts and files with no accepted
 * text at all are left out).
 */
export const ExportQuery = z.strictObject({
  accepted_only: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

export const ProjectManifest = z.strictObject({
  format: z.literal(PROJECT_ARCHIVE_FORMAT),
  version: z.literal(PROJECT_ARCHIVE_VERSION),
  project: z.strictObject({
    title: storableText().trim().min(1).max(200),
    project_type: fileType,
    language: z.enum(['zh', 'en']),
    notes: storableText().max(4000),
    info: z.record(z.string(), z.unknown()),
  }),
  files: z.array(z.strictObject({ path: storableText().min(1).max(255), title: fileTitle })).max(1999),
});
export type ProjectManifest = z.infer<typeof ProjectManifest>;

export const ArchiveFileContent = storableText().max(MAX_FILE_CHARS);
