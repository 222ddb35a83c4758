import type { TokenCounter } from './budget.ts';

/**
 * The world model (characters and settings) and the file index. Every file the role may see is
 * listed while the listing's share of the budget allows — context candidates first, so a file
 * whose content did not fit is still named and the agent can read it with query_files. A
 * world-model entry shown in full in the context is listed by title + id only; the others get a
 * one-line excerpt when there is room.
 */
export interface IndexedFile {
  id: string;
  folder: string;
  title: string;
  fileType: string;
  chars: number;
}

export const WORLD_MODEL_TYPES = new Set(['character', 'setting']);
export const EXCERPT_CHARS = 48;
/** The listing's usual share of the context budget… */
export const LISTING_SHARE = 0.25;
/** …which candidates may stretch up to this share, never more. */
export const LISTING_MAX_SHARE = 0.5;

export interface ListingPlan {
  listed: Set<string>;
  excerpted: Set<string>;
  omitted: number;
  tokens: number;
}

const worldLine = (file: IndexedFile, excerpt: string) =>
  excerpt ? `- ${file.title} (id=${file.id})：${excerpt}` : `- ${file.title} (id=${file.id})`;
const indexLine = (file: IndexedFile) =>
  `- [${file.fileType}] ${file.folder ? `${file.folder}/` : ''}${file.title} (id=${file.id}) ${file.chars} 字`;
const lineOf = (file: IndexedFile) =>
  WORLD_MODEL_TYPES.has(file.fileType) ? worldLine(file, '') : indexLine(file);

/**
 * Decides, before the content is allocated, which files are listed and which world entries get
 * an excerpt, so the listing's size is known and its tokens are taken from the budget first.
 * `priority` (the context candidates, in order) is listed first.
 */
export function planListing(input: {
  files: readonly IndexedFile[];
  priority: readonly string[];
  excerpts: ReadonlyMap<string, string>;
  budget: number;
  count: TokenCounter;
}): ListingPlan {
  const { count } = input;
  const byId = new Map(input.files.map((file) => [file.id, file]));
  const first = input.priority.filter((id) => byId.has(id));
  const firstSet = new Set(first);
  const ordered = [
    ...first.map((id) => byId.get(id)!),
    ...input.files.filter((file) => !firstSet.has(file.id)),
  ];
  const costs = new Map(ordered.map((file) => [file.id, count(lineOf(file)) + 1]));
  const priorityCost = first.reduce((sum, id) => sum + costs.get(id)!, 0);
  const cap = Math.min(
    input.budget * LISTING_MAX_SHARE,
    Math.max(input.budget * LISTING_SHARE, priorityCost),
  );
  const listed = new Set<string>();
  let used = 0;
  for (const file of ordered) {
    const cost = costs.get(file.id)!;
    if (used + cost > cap) continue;
    used += cost;
    listed.add(file.id);
  }
  const excerpted = new Set<string>();
  for (const file of ordered) {
    if (!listed.has(file.id) || !WORLD_MODEL_TYPES.has(file.fileType)) continue;
    const excerpt = excerptOf(input.excerpts.get(file.id) ?? '');
    if (!excerpt) continue;
    const extra = count(worldLine(file, excerpt)) - costs.get(file.id)! + 1;
    if (used + extra > cap) continue;
    used += extra;
    excerpted.add(file.id);
  }
  return { listed, excerpted, omitted: input.files.length - listed.size, tokens: used };
}

/** The listing as planned; world entries shown in full drop their excerpt. */
export function renderListing(
  files: readonly IndexedFile[],
  plan: ListingPlan,
  excerpts: ReadonlyMap<string, string>,
  shownInFull: ReadonlySet<string>,
): { world: string[]; index: string[] } {
  const listed = files.filter((file) => plan.listed.has(file.id));
  const world = listed
    .filter((file) => WORLD_MODEL_TYPES.has(file.fileType))
    .map((file) =>
      worldLine(
        file,
        plan.excerpted.has(file.id) && !shownInFull.has(file.id)
          ? excerptOf(excerpts.get(file.id) ?? '')
          : '',
      ),
    );
  const index = listed.filter((file) => !WORLD_MODEL_TYPES.has(file.fileType)).map(indexLine);
  if (plan.omitted > 0) index.push(`- ……另有 ${plan.omitted} 个文件未列出，用 query_files() 列出全部`);
  return { world, index };
}

export function excerptOf(content: string): string {
  const firstLine = content
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.length > 0 && !line.startsWith('#'));
  if (!firstLine) return '';
  const characters = [...firstLine];
  return characters.length > EXCERPT_CHARS ? `${characters.slice(0, EXCERPT_CHARS).join('')}……` : firstLine;
}
