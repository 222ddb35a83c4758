import { z } from 'zod';
import { AgentRole } from './roles.ts';

/**
 * Context contracts: what a step did to files (breadcrumbs for the next turn), the Context Trace
 * the compiler records for every compile (docs/agent-behaviour.md), and the visibility rule for files
 * (docs/agent-behaviour.md: isolation is enforced by the compiler and the tools, never by prompts).
 */
const id = z.string().min(1).max(64);

/** One file operation a step performed; the router turns a run's operations into breadcrumbs. */
export const FileOperation = z.object({
  op: z.enum(['created', 'edited', 'deleted', 'read']),
  file_id: id,
  title: z.string(),
});
export type FileOperation = z.infer<typeof FileOperation>;

export const FileRef = z.object({ file_id: id, title: z.string() });
export type FileRef = z.infer<typeof FileRef>;

/**
 * Stored with an assistant message (`messages.breadcrumbs`) and rendered after its text as
 * 「[此前的工具操作]」, because replayed history drops tool results (docs/agent-behaviour.md 跨轮记忆). `read` lists
 * only files read whole by id, not range reads.
 */
export const Breadcrumbs = z.object({
  v: z.literal(1),
  created: z.array(FileRef),
  edited: z.array(FileRef),
  deleted: z.array(FileRef),
  read: z.array(FileRef),
});
export type Breadcrumbs = z.infer<typeof Breadcrumbs>;

export const CONTEXT_TIERS = ['critical', 'constraint', 'relevant', 'inspiration'] as const;
export const ContextTier = z.enum(CONTEXT_TIERS);
export type ContextTier = z.infer<typeof ContextTier>;

/** Where a piece of context came from. */
export const ContextSource = z.enum([
  'focus',
  'attached',
  'reference',
  'review_target',
  'character',
  'setting',
  'outline',
  'previous_chapter',
  'sibling_chapter',
  'retrieval',
  'note',
  'working_set',
  'history',
  'history_summary',
  'skill_catalog',
  'chosen_skill',
  'file_index',
]);
export type ContextSource = z.infer<typeof ContextSource>;

export const ExclusionReason = z.enum([
  // Did not fit the token budget (or its remnant was too small to be worth showing).
  'budget',
  // The role may not see the file (files.visibility).
  'visibility',
  // Already present in a higher-priority place (e.g. a working-set file also in focus).
  'duplicate',
  // Over a count or size limit (working-set files, chosen skills, file index lines).
  'limit',
  // Old history replaced by its summary; the full text is archived.
  'compacted',
]);
export type ExclusionReason = z.infer<typeof ExclusionReason>;

export const TraceLoaded = z.object({
  source: ContextSource,
  file_id: z.string().optional(),
  title: z.string(),
  tier: ContextTier.optional(),
  shown_chars: z.number().int().nonnegative(),
  total_chars: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
  full: z.boolean(),
  /** Why the role may see it: the file's visibility, or `review_target` for the reviewer. */
  permission: z.string(),
});
export type TraceLoaded = z.infer<typeof TraceLoaded>;

export const TraceExcluded = z.object({
  source: ContextSource,
  file_id: z.string().optional(),
  title: z.string(),
  tier: ContextTier.optional(),
  reason: ExclusionReason,
  detail: z.string().optional(),
  total_chars: z.number().int().nonnegative().optional(),
});
export type TraceExcluded = z.infer<typeof TraceExcluded>;

export const ContextTrace = z.object({
  v: z.literal(1),
  run_id: id,
  role: AgentRole,
  step: z.number().int().nonnegative(),
  compiled_at: z.string(),
  budgets: z.object({
    context_tokens: z.number().int(),
    history_tokens: z.number().int(),
    ledger_ceiling_tokens: z.number().int(),
    skill_tokens: z.number().int(),
  }),
  /** Tokens actually used by each part of the compiled prompt. */
  usage: z.object({
    system_tokens: z.number().int(),
    history_tokens: z.number().int(),
    context_tokens: z.number().int(),
    working_set_tokens: z.number().int(),
    turn_tokens: z.number().int(),
    prompt_tokens: z.number().int(),
  }),
  loaded: z.array(TraceLoaded),
  excluded: z.array(TraceExcluded),
  history: z.object({
    kept_messages: z.number().int().nonnegative(),
    /** Messages before the compaction boundary, represented by the summary. */
    compacted_messages: z.number().int().nonnegative(),
    /** Messages the ledger or budget dropped without a summary (compaction off). */
    dropped_messages: z.number().int().nonnegative(),
    archive_file_id: z.string().optional(),
  }),
});
export type ContextTrace = z.infer<typeof ContextTrace>;

/** `GET /agent/runs/:runId/context-trace`: every compile of the run, in step order. */
export const ContextTraceResponse = z.object({
  run_id: id,
  traces: z.array(
    z.object({ role: AgentRole, step: z.number().int(), created_at: z.string(), trace: ContextTrace }),
  ),
});
export type ContextTraceResponse = z.infer<typeof ContextTraceResponse>;

/**
 * File visibility (`files.visibility`): `all` (default), `author_only` (no agent role sees it) or
 * `private_to:<role>[,<role>…]`. Anything else is treated as hidden: fail closed.
 */
export const FILE_VISIBILITY_ALL = 'all';
export const FILE_VISIBILITY_AUTHOR_ONLY = 'author_only';
const PRIVATE_PREFIX = 'private_to:';

export function isVisibilityValid(visibility: string): boolean {
  if (visibility === FILE_VISIBILITY_ALL || visibility === FILE_VISIBILITY_AUTHOR_ONLY) return true;
  if (!visibility.startsWith(PRIVATE_PREFIX)) return false;
  const roles = visibility.slice(PRIVATE_PREFIX.length).split(',');
  return roles.length > 0 && roles.every((role) => AgentRole.safeParse(role).success);
}

export interface VisibilityOptions {
  /**
   * Files written in this run. The reviewer must see what it reviews, so these are visible to
   * `quality_reviewer` unless they are `author_only`.
   */
  reviewTargetIds?: ReadonlySet<string>;
}

/** The permission a role has on a file (`all`, `private_to:…`, `review_target`), or null. */
export function filePermission(
  file: { id: string; visibility: string },
  role: AgentRole,
  options: VisibilityOptions = {},
): string | null {
  const { visibility } = file;
  if (visibility === FILE_VISIBILITY_ALL) return visibility;
  if (visibility === FILE_VISIBILITY_AUTHOR_ONLY) return null;
  if (isVisibilityValid(visibility) && visibility.slice(PRIVATE_PREFIX.length).split(',').includes(role)) {
    return visibility;
  }
  if (role === 'quality_reviewer' && options.reviewTargetIds?.has(file.id)) return 'review_target';
  return null;
}

export function isFileVisibleTo(
  file: { id: string; visibility: string },
  role: AgentRole,
  options: VisibilityOptions = {},
): boolean {
  return filePermission(file, role, options) !== null;
}

/** Seed 000 skills/content_budget: distinct skills whose text one request may read. */
export const MAX_SKILLS_PER_REQUEST = 3;
/** Skill names as in the SKILL.md standard: lowercase letters, digits and hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX_LENGTH = 64;

/** `PUT /projects/:projectId/files/:fileId/visibility`: who among the agent roles may see a file. */
export const FileVisibilityBody = z.strictObject({
  visibility: z
    .string()
    .max(200)
    .refine(isVisibilityValid, 'expected all, author_only or private_to:<role>[,<role>…]'),
});
export type FileVisibilityBody = z.infer<typeof FileVisibilityBody>;
