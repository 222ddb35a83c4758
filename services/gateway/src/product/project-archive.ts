import {
  ArchiveFileContent,
  ArchiveFrontMatter,
  chapterNumber,
  PROJECT_ARCHIVE_FORMAT,
  PROJECT_ARCHIVE_VERSION,
  PROJECT_MANIFEST_FILE,
  ProjectManifest,
  type SkillZipRejection,
} from '@quill/contracts';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { z } from 'zod';

/**
 * The project zip (libs/contracts project-archive.ts) as pure functions: `renderArchive` lays a
 * project out as files, `parseArchive` reads the files of an uploaded zip back (after the zip
 * reader's safety checks). Nothing here carries an id or a time, so export → import → export
 * gives the same bytes.
 */
export interface ArchiveProject {
  title: string;
  projectType: string;
  language: string;
  notes: string;
  info: Record<string, unknown>;
}
export interface ArchiveFile {
  title: string;
  fileType: string;
  folder: string;
  content: string;
  visibility: string;
  /** The place in the archive of the file this one is an AI draft of. */
  draftOfOrder: number | null;
}

export type ArchiveRule = SkillZipRejection | 'missing_manifest' | 'invalid_manifest' | 'unlisted_file';
export class ProjectArchiveError extends Error {
  readonly rule: ArchiveRule;
  readonly path: string | undefined;
  constructor(rule: ArchiveRule, message: string, path?: string) {
    super(message);
    this.name = new.target.name;
    this.rule = rule;
    this.path = path;
  }
}

const FRONT_MATTER = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/;
// Characters no archiver or file system takes in a name; the title itself is in the front matter.
const UNSAFE_NAME_CHARACTERS = '\\/:*?"<>|\u007f';
const safeCharacter = (character: string) =>
  character < ' ' || UNSAFE_NAME_CHARACTERS.includes(character) ? '_' : character;

function entryPath(order: number, title: string): string {
  const name = Array.from(title, safeCharacter).slice(0, 80).join('');
  return `files/${String(order + 1).padStart(4, '0')}-${name}.md`;
}

/** A project file as stored: its id and, for an AI draft, the id of its original. */
export type StoredFile = Omit<ArchiveFile, 'draftOfOrder'> & {
  id: string;
  draftOf: string | null;
  /** Unaccepted AI text: its artifact's state (pending-text.ts). */
  acceptance?: ArchiveFrontMatter['acceptance'];
};

export function renderArchive(
  project: ArchiveProject,
  files: readonly StoredFile[],
): Array<{ path: string; content: string }> {
  const orderOf = new Map(files.map((file, order) => [file.id, order]));
  const entries = files.map((file, order) => {
    // A draft whose original is deleted is exported as an ordinary file.
    const draftOf = file.draftOf === null ? undefined : orderOf.get(file.draftOf);
    const front: ArchiveFrontMatter = {
      title: file.title,
      type: file.fileType,
      folder: file.folder,
      order,
      ...(file.visibility === 'all' ? {} : { visibility: file.visibility }),
      ...(draftOf === undefined ? {} : { draft_of: draftOf }),
      ...(file.acceptance === undefined ? {} : { acceptance: file.acceptance }),
    };
    return {
      path: entryPath(order, file.title),
      title: file.title,
      content: `---\n${stringifyYaml(front).trimEnd()}\n---\n${file.content}`,
    };
  });
  const manifest: ProjectManifest = {
    format: PROJECT_ARCHIVE_FORMAT,
    version: PROJECT_ARCHIVE_VERSION,
    project: {
      title: project.title,
      project_type: project.projectType,
      language: project.language as ProjectManifest['project']['language'],
      notes: project.notes,
      info: project.info,
    },
    files: entries.map((entry) => ({ path: entry.path, title: entry.title })),
  };
  return [
    { path: PROJECT_MANIFEST_FILE, content: `${JSON.stringify(manifest, null, 2)}\n` },
    ...entries.map(({ path, content }) => ({ path, content })),
  ];
}

/** The project and its files, in manifest order, from a checked zip's entries. */
export function parseArchive(entries: ReadonlyMap<string, Buffer>): {
  project: ArchiveProject;
  files: ArchiveFile[];
} {
  const manifestBytes = entries.get(PROJECT_MANIFEST_FILE);
  if (!manifestBytes)
    throw new ProjectArchiveError('missing_manifest', 'The zip has no manifest.json at its root.');
  let raw: unknown;
  try {
    raw = JSON.parse(decodeText(manifestBytes, PROJECT_MANIFEST_FILE));
  } catch (error) {
    if (error instanceof ProjectArchiveError) throw error;
    throw new ProjectArchiveError('invalid_manifest', 'manifest.json is not JSON.', PROJECT_MANIFEST_FILE);
  }
  const manifest = checked(ProjectManifest, raw, 'invalid_manifest', PROJECT_MANIFEST_FILE);
  const listed = new Set(manifest.files.map((file) => file.path));
  for (const path of entries.keys()) {
    if (path !== PROJECT_MANIFEST_FILE && !listed.has(path))
      throw new ProjectArchiveError('unlisted_file', `“${path}” is not listed in manifest.json.`, path);
  }
  const files = manifest.files.map((listedFile, index) => {
    const bytes = entries.get(listedFile.path);
    if (!bytes)
      throw new ProjectArchiveError(
        'invalid_manifest',
        `“${listedFile.path}” is listed but missing.`,
        listedFile.path,
      );
    const match = FRONT_MATTER.exec(decodeText(bytes, listedFile.path));
    if (!match)
      throw new ProjectArchiveError(
        'invalid_front_matter',
        'A file must start with a --- front matter block.',
        listedFile.path,
      );
    let front: unknown;
    try {
      front = parseYaml(match[1]!);
    } catch {
      throw new ProjectArchiveError(
        'invalid_front_matter',
        'The front matter is not valid YAML.',
        listedFile.path,
      );
    }
    const meta = checked(ArchiveFrontMatter, front, 'invalid_front_matter', listedFile.path);
    if (meta.order !== index)
      throw new ProjectArchiveError(
        'invalid_front_matter',
        `order ${meta.order} is not its place ${index} in the manifest.`,
        listedFile.path,
      );
    if (meta.draft_of !== undefined && (meta.draft_of === index || meta.draft_of >= manifest.files.length))
      throw new ProjectArchiveError(
        'invalid_front_matter',
        `draft_of ${meta.draft_of} is not another file of the archive.`,
        listedFile.path,
      );
    const content = checked(ArchiveFileContent, match[2]!, 'file_too_large', listedFile.path);
    return {
      title: meta.title,
      fileType: meta.type,
      folder: meta.folder,
      content,
      visibility: meta.visibility ?? 'all',
      draftOfOrder: meta.draft_of ?? null,
    };
  });
  const { project } = manifest;
  return {
    project: {
      title: project.title,
      projectType: project.project_type,
      language: project.language,
      notes: project.notes,
      info: project.info,
    },
    files,
  };
}

function checked<S extends z.ZodType>(
  schema: S,
  value: unknown,
  rule: ArchiveRule,
  path: string,
): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ProjectArchiveError(rule, `${issue.path.join('.') || 'value'}: ${issue.message}`, path);
}

function decodeText(data: Buffer, path: string): string {
  if (data.includes(0))
    throw new ProjectArchiveError('binary_file', `“${path}” is binary; files must be text.`, path);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new ProjectArchiveError('binary_file', `“${path}” is not UTF-8 text.`, path);
  }
}

const PENDING_LABELS = {
  zh: {
    drafted: '【AI 草稿，待作者验收】',
    under_review: '【AI 草稿，审阅中，待作者验收】',
    revision_requested: '【AI 草稿，作者已要求返修】',
  },
  en: {
    drafted: '[AI draft, not yet accepted by the author]',
    under_review: '[AI draft, reviewed, not yet accepted by the author]',
    revision_requested: '[AI draft, sent back for a revision by the author]',
  },
} as const;

/**
 * The manuscript: the project's chapters (draft files that are not AI drafts of another file)
 * in chapter order — by the number in the title (the context compiler's rule,
 * libs/contracts chapters.ts), numberless ones after, by folder and title — as one Markdown file.
 */
export function renderManuscript(
  title: string,
  files: ReadonlyArray<{
    title: string;
    folder: string;
    fileType: string;
    draftOf: string | null;
    content: string;
    acceptance?: ArchiveFrontMatter['acceptance'];
  }>,
  language = 'zh',
): string {
  const chapters = files
    .filter((file) => file.fileType === 'draft' && file.draftOf === null)
    .map((file) => ({ file, number: chapterNumber(file.title) ?? Number.POSITIVE_INFINITY }))
    .sort(
      (a, b) =>
        a.number - b.number ||
        (a.file.folder < b.file.folder ? -1 : a.file.folder > b.file.folder ? 1 : 0) ||
        (a.file.title < b.file.title ? -1 : a.file.title > b.file.title ? 1 : 0),
    );
  const parts = [
    `# ${title}\n`,
    ...chapters.map(({ file }) => {
      // Unaccepted AI text says so where a reader meets it (docs/kernel.md "Artifacts and acceptance").
      const label = file.acceptance
        ? `> ${PENDING_LABELS[language === 'en' ? 'en' : 'zh'][file.acceptance]}\n\n`
        : '';
      return `## ${file.title}\n\n${label}${file.content.trim()}\n`;
    }),
  ];
  return parts.join('\n');
}
