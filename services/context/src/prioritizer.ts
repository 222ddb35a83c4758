import type { ContextSource, ContextTier } from '@quill/contracts';
import { chapterNumber, requestedChapter } from './chapters.ts';
import { mentions } from './query-terms.ts';

/**
 * Which project files a role should see for this request, at which tier, in which order (docs/agent-behaviour.md
 * 「上下文与跨轮记忆」): CRITICAL (focus, review targets, the author's references) → CONSTRAINT
 * (characters and core settings — named in the request or in play in the scene — before the
 * related outline and the previous chapter) → RELEVANT (sibling chapters, the other characters
 * and settings; retrieval snippets are added later) → INSPIRATION (notes). Every character and
 * setting is still in the world model with a one-line excerpt.
 * Pure: the compiler hands in metadata of the files the role may see.
 */
export interface CandidateFile {
  id: string;
  folder: string;
  title: string;
  fileType: string;
  chars: number;
}

export interface Candidate {
  file: CandidateFile;
  source: ContextSource;
  tier: ContextTier;
  /** Sort key inside the tier: lower first. */
  group: number;
  /** Higher first within a group. */
  score: number;
}

export interface PrioritizeInput {
  files: readonly CandidateFile[];
  message: string;
  focusId: string | null;
  attachedIds: readonly string[];
  /** Files written in this run (the reviewer's review targets); empty for other roles. */
  reviewTargetIds: readonly string[];
  /**
   * The scene being worked on (the focus file and the previous chapter): characters and settings
   * named in it are in play for this request, so they go to CONSTRAINT.
   */
  sceneText: string;
}

export const TIER_RANK: Record<ContextTier, number> = {
  critical: 0,
  constraint: 1,
  relevant: 2,
  inspiration: 3,
};
export const MAX_SIBLING_CHAPTERS = 4;
const MAX_NOTES = 4;
// 「用户引用」: a title the author quotes in 《》, 「」 or “” or names with @.
const REFERENCE_PATTERNS = [/《([^》]{1,80})》/g, /「([^」]{1,80})」/g, /“([^”]{1,80})”/g, /@(\S{1,80})/g];

export function referencedTitles(message: string): string[] {
  const titles: string[] = [];
  for (const pattern of REFERENCE_PATTERNS) {
    for (const match of message.matchAll(pattern)) titles.push(match[1]!.trim());
  }
  return titles;
}

export function prioritize(input: PrioritizeInput): Candidate[] {
  const byId = new Map(input.files.map((file) => [file.id, file]));
  const taken = new Set<string>();
  const candidates: Candidate[] = [];
  const add = (
    file: CandidateFile | undefined,
    source: ContextSource,
    tier: ContextTier,
    group: number,
    score = 0,
  ) => {
    if (!file || taken.has(file.id)) return;
    taken.add(file.id);
    candidates.push({ file, source, tier, group, score });
  };

  // CRITICAL: what the author pointed at, and for the reviewer what it must review.
  add(input.focusId ? byId.get(input.focusId) : undefined, 'focus', 'critical', 0);
  input.reviewTargetIds.forEach((id, index) => {
    add(byId.get(id), 'review_target', 'critical', 1, -index);
  });
  input.attachedIds.forEach((id, index) => {
    add(byId.get(id), 'attached', 'critical', 2, -index);
  });
  const referenced = new Set(referencedTitles(input.message));
  for (const file of input.files) {
    if (referenced.has(file.title)) add(file, 'reference', 'critical', 3);
  }

  // CONSTRAINT: characters and settings named in the request first, then those in play in the
  // scene (characters before settings), the related outline, the previous chapter — character
  // cards and lore before chapters (docs/agent-behaviour.md).
  const query = input.message;
  const worldFiles = input.files.filter(
    (file) => file.fileType === 'character' || file.fileType === 'setting',
  );
  for (const file of worldFiles)
    if (mentions(query, file.title)) add(file, file.fileType as ContextSource, 'constraint', 0, 1);
  for (const file of worldFiles) {
    if (file.fileType === 'character' && mentions(input.sceneText, file.title))
      add(file, 'character', 'constraint', 1);
  }
  for (const file of worldFiles) {
    if (file.fileType === 'setting' && mentions(input.sceneText, file.title))
      add(file, 'setting', 'constraint', 2);
  }
  const chapters = chapterPlan(input);
  for (const file of input.files) {
    if (
      file.fileType === 'outline' &&
      (chapters.folder === null || file.folder === chapters.folder || file.folder === '')
    ) {
      add(file, 'outline', 'constraint', 3);
    }
  }
  add(chapters.previous, 'previous_chapter', 'constraint', 4);

  // RELEVANT: nearby chapters, the characters and settings not in play, other outlines.
  chapters.siblings.forEach((file, index) => {
    add(file, 'sibling_chapter', 'relevant', 0, -index);
  });
  for (const file of worldFiles) if (file.fileType === 'character') add(file, 'character', 'relevant', 1);
  for (const file of worldFiles) if (file.fileType === 'setting') add(file, 'setting', 'relevant', 2);
  for (const file of input.files) if (file.fileType === 'outline') add(file, 'outline', 'relevant', 3);

  // INSPIRATION: the most recent notes.
  input.files
    .filter((file) => file.fileType === 'note')
    .slice(-MAX_NOTES)
    .forEach((file) => {
      add(file, 'note', 'inspiration', 0);
    });

  return orderCandidates(candidates);
}

export function orderCandidates(candidates: Candidate[]): Candidate[] {
  return candidates
    .map((candidate, index) => ({ candidate, index }))
    .sort(
      (a, b) =>
        TIER_RANK[a.candidate.tier] - TIER_RANK[b.candidate.tier] ||
        a.candidate.group - b.candidate.group ||
        b.candidate.score - a.candidate.score ||
        a.index - b.index,
    )
    .map(({ candidate }) => candidate);
}

interface ChapterPlan {
  folder: string | null;
  previous: CandidateFile | undefined;
  siblings: CandidateFile[];
}

/**
 * The chapter being worked on: the focus draft, else the chapter the message names (「写第五章」),
 * else the one after the latest. The previous chapter is the nearest lower number; siblings are
 * the other chapters of the same folder closest to it.
 */
export function chapterPlan(input: Pick<PrioritizeInput, 'files' | 'focusId' | 'message'>): ChapterPlan {
  const drafts = input.files
    .filter((file) => file.fileType === 'draft')
    .map((file) => ({ file, number: chapterNumber(file.title) }))
    .filter((entry): entry is { file: CandidateFile; number: number } => entry.number !== null);
  if (drafts.length === 0) return { folder: null, previous: undefined, siblings: [] };
  const focus = input.focusId ? drafts.find((entry) => entry.file.id === input.focusId) : undefined;
  const folder = focus?.file.folder ?? busiestFolder(drafts.map((entry) => entry.file.folder));
  const inFolder = drafts.filter((entry) => entry.file.folder === folder).sort((a, b) => a.number - b.number);
  const target = focus?.number ?? requestedChapter(input.message) ?? (inFolder.at(-1)?.number ?? 0) + 1;
  const previous = inFolder.filter((entry) => entry.number < target).at(-1);
  const siblings = inFolder
    .filter((entry) => entry.number !== target && entry !== previous)
    .sort((a, b) => Math.abs(a.number - target) - Math.abs(b.number - target) || a.number - b.number)
    .slice(0, MAX_SIBLING_CHAPTERS)
    .map((entry) => entry.file);
  return { folder, previous: previous?.file, siblings };
}

function busiestFolder(folders: string[]): string {
  const counts = new Map<string, number>();
  for (const folder of folders) counts.set(folder, (counts.get(folder) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
}
