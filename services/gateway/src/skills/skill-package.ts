import { SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN } from '@quill/contracts';
import type { SkillPackageInput } from '@quill/db';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { SkillPackageError } from './skill-package-error.ts';

/**
 * A standard skill package: `SKILL.md` (YAML front matter with `name` and `description`, then
 * the method as Markdown) plus resource files, at the zip's root or inside one top-level folder.
 * Resources are kept as text (scripts included: read by the agent, never executed).
 */
export const SKILL_FILE = 'SKILL.md';
const MAX_DESCRIPTION_CHARS = 1024;
const FRONT_MATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

export function parseSkillMarkdown(text: string): { metadata: Record<string, unknown>; body: string } {
  const match = FRONT_MATTER.exec(text);
  if (!match)
    throw new SkillPackageError(
      'invalid_front_matter',
      'SKILL.md must start with a --- front matter block.',
      SKILL_FILE,
    );
  let metadata: unknown;
  try {
    metadata = parseYaml(match[1]!);
  } catch (error) {
    throw new SkillPackageError(
      'invalid_front_matter',
      `SKILL.md front matter is not valid YAML: ${(error as Error).message}`,
      SKILL_FILE,
    );
  }
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new SkillPackageError(
      'invalid_front_matter',
      'SKILL.md front matter must be a mapping.',
      SKILL_FILE,
    );
  }
  const record = metadata as Record<string, unknown>;
  const name = record.name;
  const description = record.description;
  if (typeof name !== 'string' || name.length > SKILL_NAME_MAX_LENGTH || !SKILL_NAME_PATTERN.test(name)) {
    throw new SkillPackageError(
      'invalid_front_matter',
      'SKILL.md `name` must be lowercase letters, digits and hyphens (at most 64).',
      SKILL_FILE,
    );
  }
  if (typeof description !== 'string' || !description.trim() || description.length > MAX_DESCRIPTION_CHARS) {
    throw new SkillPackageError(
      'invalid_front_matter',
      'SKILL.md `description` must be 1–1024 characters.',
      SKILL_FILE,
    );
  }
  return { metadata: record, body: match[2]!.trim() };
}

/** Builds the package from the zip's (already checked) files. */
export function buildSkillPackage(files: ReadonlyMap<string, Buffer>): SkillPackageInput {
  const prefix = packageRoot([...files.keys()]);
  const skillFile = files.get(`${prefix}${SKILL_FILE}`);
  if (!skillFile) {
    throw new SkillPackageError(
      'missing_skill_md',
      'The zip has no SKILL.md at its root or in a single top-level folder.',
    );
  }
  const { metadata, body } = parseSkillMarkdown(decodeText(skillFile, SKILL_FILE));
  const resources: Array<{ path: string; content: string }> = [];
  for (const [path, data] of files) {
    if (path === `${prefix}${SKILL_FILE}`) continue;
    const relative = path.startsWith(prefix) ? path.slice(prefix.length) : path;
    resources.push({ path: relative, content: decodeText(data, relative) });
  }
  resources.sort((a, b) => a.path.localeCompare(b.path));
  return {
    name: metadata.name as string,
    description: (metadata.description as string).trim(),
    content: body,
    metadata,
    resources,
  };
}

/** '' when SKILL.md is at the root, else `folder/` when every file sits in that one folder. */
function packageRoot(paths: readonly string[]): string {
  if (paths.includes(SKILL_FILE)) return '';
  const tops = new Set(paths.map((path) => path.split('/')[0]));
  if (tops.size === 1 && paths.every((path) => path.includes('/'))) return `${[...tops][0]}/`;
  return '';
}

function decodeText(data: Buffer, path: string): string {
  if (data.includes(0))
    throw new SkillPackageError('binary_file', `“${path}” is binary; skill files must be text.`, path);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new SkillPackageError('binary_file', `“${path}” is not UTF-8 text.`, path);
  }
}

/** SKILL.md as exported: the stored front matter, then the body. */
export function renderSkillMarkdown(metadata: Record<string, unknown>, body: string): string {
  return `---\n${stringifyYaml(metadata).trimEnd()}\n---\n\n${body}\n`;
}
