import type { ContextTier, TraceExcluded, TraceLoaded } from '@quill/contracts';
import type { UnacceptedState } from '@quill/db';
import {
  type Allocation,
  allocate,
  type BudgetItem,
  NON_CRITICAL_ITEM_SHARE,
  type TokenCounter,
} from './budget.ts';
import type { FileSearchHit } from './file-search.ts';
import { type Candidate, chapterPlan, prioritize, TIER_RANK } from './prioritizer.ts';
import { type IndexedFile, planListing, renderListing, WORLD_MODEL_TYPES } from './project-index.ts';
import { fullHeader, inWorkingSetLine, itemBlock, TIER_HEADINGS, truncatedHeader } from './render.ts';
import { pickSnippets, placeSnippets } from './retrieval.ts';

/**
 * ContextAssembler: picks, budgets and renders the project context for one request. Pure: the
 * loader (loader.ts) reads the contents and search hits it names (assemblyReads) beforehand.
 * Only files the part may show reach it (the compiler filters by visibility first).
 */
export interface VisibleFile extends IndexedFile {
  permission: string;
  /** An AI text the author has not accepted yet: labelled a draft (render.ts DRAFT_LABELS). */
  unaccepted?: UnacceptedState | null;
}

export interface AssemblyRequest {
  message: string;
  focusId: string | null;
  attachedIds: readonly string[];
  reviewTargetIds: readonly string[];
  files: readonly VisibleFile[];
}

export interface AssembleInput extends AssemblyRequest {
  /** File contents by id: at least the scene, the candidates and the world model (assemblyReads). */
  contents: ReadonlyMap<string, string>;
  /** Search hits over the part's files, ranked, at least searchLimit of them when there are. */
  searchHits: readonly FileSearchHit[];
  /** Files the working set already shows whole: listed here by reference only. */
  workingSetIds: ReadonlySet<string>;
  budget: number;
  count: TokenCounter;
}

/** The scene being worked on: its text decides which characters and settings are in play. */
export function sceneIds(input: AssemblyRequest): string[] {
  const focus = input.files.find((file) => file.id === input.focusId);
  const scene = chapterPlan({ files: input.files, focusId: focus?.id ?? null, message: input.message });
  return [focus?.id, scene.previous?.id].filter((id): id is string => id !== undefined);
}

function candidatesOf(input: AssemblyRequest, contents: ReadonlyMap<string, string>): Candidate[] {
  const focus = input.files.find((file) => file.id === input.focusId);
  return prioritize({
    files: input.files,
    message: input.message,
    focusId: focus?.id ?? null,
    attachedIds: input.attachedIds,
    reviewTargetIds: input.reviewTargetIds,
    sceneText: sceneIds(input)
      .map((id) => contents.get(id) ?? '')
      .join('\n'),
  });
}

/** The contents the assembly reads, once the scene's are known: candidates and the world model. */
export function assemblyReads(input: AssemblyRequest, sceneContents: ReadonlyMap<string, string>): string[] {
  const worldIds = input.files.filter((file) => WORLD_MODEL_TYPES.has(file.fileType)).map((file) => file.id);
  return [
    ...new Set([...candidatesOf(input, sceneContents).map((candidate) => candidate.file.id), ...worldIds]),
  ];
}

export interface AssembledContext {
  text: string;
  tokens: number;
  currentFile: string | null;
  loaded: TraceLoaded[];
  excluded: TraceExcluded[];
}

// Section and tier headings and the "n files not listed" line.
const LAYOUT_RESERVE_TOKENS = 160;
/** Held back from the tiers for retrieval snippets; unused, it goes to INSPIRATION. */
const RETRIEVAL_SHARE = 0.1;

export interface Block {
  tier: ContextTier;
  text: string;
  tokens: number;
}

export function assembleContext(input: AssembleInput): AssembledContext {
  const { count, contents } = input;
  const byId = new Map(input.files.map((file) => [file.id, file]));
  const focus = input.focusId ? byId.get(input.focusId) : undefined;
  const candidates = candidatesOf(input, contents);
  const loaded: TraceLoaded[] = [];
  const excluded: TraceExcluded[] = [];
  const blocks: Block[] = [];
  const shownInFull = new Set<string>();
  const shown = new Set<string>();

  // The listing (world model + file index) is sized first and its tokens taken off the top; a
  // share is then held back so retrieval snippets are not crowded out by the tiers before them.
  const plan = planListing({
    files: input.files,
    priority: candidates.map((candidate) => candidate.file.id),
    excerpts: contents,
    budget: input.budget,
    count,
  });
  let remaining = Math.max(0, input.budget - plan.tokens - LAYOUT_RESERVE_TOKENS);
  const retrievalReserve = Math.floor(remaining * RETRIEVAL_SHARE);
  const itemCap = Math.floor(input.budget * NON_CRITICAL_ITEM_SHARE);

  const record = (candidate: Candidate, allocation: Allocation) => {
    const { file } = candidate;
    const content = contents.get(file.id) ?? '';
    const base = { source: candidate.source, file_id: file.id, title: file.title, tier: candidate.tier };
    if (allocation.status === 'dropped') {
      excluded.push({ ...base, reason: 'budget', detail: allocation.detail, total_chars: content.length });
      return;
    }
    const full = allocation.status === 'full';
    const header = full
      ? fullHeader(file.title, file.id, byId.get(file.id)?.unaccepted)
      : truncatedHeader(
          file.title,
          file.id,
          allocation.shown.length,
          content.length,
          byId.get(file.id)?.unaccepted,
        );
    blocks.push({
      tier: candidate.tier,
      text: itemBlock(header, allocation.shown),
      tokens: allocation.tokens,
    });
    shown.add(file.id);
    if (full) shownInFull.add(file.id);
    loaded.push({
      ...base,
      shown_chars: allocation.shown.length,
      total_chars: content.length,
      tokens: allocation.tokens,
      full,
      permission: byId.get(file.id)?.permission ?? 'all',
    });
  };

  const runPass = (pass: Candidate[], holdBack = 0) => {
    const live: Candidate[] = [];
    for (const candidate of pass) {
      if (input.workingSetIds.has(candidate.file.id)) {
        const line = inWorkingSetLine(candidate.file.title, candidate.file.id);
        blocks.push({ tier: candidate.tier, text: line, tokens: count(line) + 1 });
        excluded.push({
          source: candidate.source,
          file_id: candidate.file.id,
          title: candidate.file.title,
          tier: candidate.tier,
          reason: 'duplicate',
          detail: 'shown whole in the working set',
        });
      } else live.push(candidate);
    }
    const items: BudgetItem[] = live.map((candidate) => ({
      key: candidate.file.id,
      tier: candidate.tier,
      content: contents.get(candidate.file.id) ?? '',
      headerTokens: count(truncatedHeader(candidate.file.title, candidate.file.id, 99999, 99999)) + 1,
    }));
    const result = allocate(items, { budget: Math.max(0, remaining - holdBack), itemCap }, count);
    remaining -= result.used;
    result.allocations.forEach((allocation, position) => {
      record(live[position]!, allocation);
    });
  };

  runPass(
    candidates.filter((candidate) => candidate.tier !== 'inspiration'),
    retrievalReserve,
  );

  // Retrieval snippets (RELEVANT) over what is not shown yet.
  const searchable = input.files
    .filter((file) => !shown.has(file.id) && !input.workingSetIds.has(file.id))
    .map((file) => file.id);
  const snippets = pickSnippets(input.searchHits, input.message, new Set(searchable));
  const placed = placeSnippets(snippets, byId, remaining, count);
  remaining -= placed.used;
  for (const id of placed.shownIds) shown.add(id);
  blocks.push(...placed.blocks);
  loaded.push(...placed.loaded);
  excluded.push(...placed.excluded);

  runPass(
    candidates.filter((candidate) => candidate.tier === 'inspiration' && !shown.has(candidate.file.id)),
  );

  const { world, index } = renderListing(input.files, plan, contents, shownInFull);
  const sections: string[] = [];
  const headings: string[] = [];
  const section = (heading: string, body: string) => {
    headings.push(heading);
    sections.push(`${heading}\n${body}`);
  };
  if (world.length > 0) section('### 世界模型（角色与设定）', world.join('\n'));
  if (index.length > 0) section('### 文件清单', index.join('\n'));
  const items = renderTiers(blocks);
  if (items.text) section('### 上下文条目', items.text);
  const text = sections.join('\n\n');
  // Counted by parts (each already measured) rather than re-tokenising the whole text: a part's
  // count is cached across compiles, the joined text is new every time.
  const tokens =
    plan.tokens +
    blocks.reduce((sum, block) => sum + block.tokens, 0) +
    count([...headings, ...items.headings].join('\n'));
  loaded.push({
    source: 'file_index',
    title: '世界模型与文件清单',
    shown_chars: world.join('\n').length + index.join('\n').length,
    total_chars: input.files.length,
    tokens: plan.tokens,
    full: plan.omitted === 0,
    permission: 'all',
  });
  if (plan.omitted > 0) {
    excluded.push({
      source: 'file_index',
      title: '文件清单',
      reason: 'limit',
      detail: `${plan.omitted} files not listed`,
    });
  }
  return {
    text,
    tokens,
    currentFile: focus ? `${focus.title} (id=${focus.id})` : null,
    loaded,
    excluded,
  };
}

function renderTiers(blocks: Block[]): { text: string; headings: string[] } {
  const ordered = [...blocks].sort((a, b) => TIER_RANK[a.tier] - TIER_RANK[b.tier]);
  const parts: string[] = [];
  const headings: string[] = [];
  let tier: ContextTier | undefined;
  for (const block of ordered) {
    if (block.tier !== tier) {
      tier = block.tier;
      headings.push(TIER_HEADINGS[tier]);
      parts.push(TIER_HEADINGS[tier]);
    }
    parts.push(block.text);
  }
  return { text: parts.join('\n\n'), headings };
}
