import { z } from 'zod';
import { FileOperation } from './context.ts';
import { Phase } from './roles.ts';
import { int4, storableText } from './text.ts';

/**
 * The product API's bodies (README "HTTP API"): projects, notes, session history, members,
 * accounts and API keys. Lists are cursor-paginated: `?limit=1..100&cursor=<opaque>` →
 * `{ <items>, next_cursor }`, null on the last page.
 */
export const PAGE_LIMIT_MAX = 100;
export const PageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(PAGE_LIMIT_MAX).default(20),
  cursor: storableText().min(1).max(200).optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;
const nextCursor = z.string().nullable();

export const PROJECT_TYPES = ['novel', 'script', 'short_story', 'other'] as const;
export const ProjectType = z.enum(PROJECT_TYPES);
export const ProjectLanguage = z.enum(['zh', 'en']);
export const ProjectRoleName = z.enum(['owner', 'editor', 'viewer']);
/** Roles an owner may grant; a project has exactly one owner, its creator. */
export const GrantableRole = z.enum(['editor', 'viewer']);

const title = storableText().trim().min(1).max(200);

export const ListProjectsQuery = PageQuery.extend({
  archived: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});
export const CreateProjectBody = z.strictObject({
  title,
  project_type: ProjectType.default('novel'),
  language: ProjectLanguage.default('zh'),
  /** `review` (the default): the author accepts each AI text; `auto`: it is accepted as saved. */
  artifact_acceptance: z.enum(['auto', 'review']).default('review'),
});
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;
export const UpdateProjectBody = z
  .strictObject({
    title: title.optional(),
    archived: z.boolean().optional(),
    project_type: ProjectType.optional(),
    language: ProjectLanguage.optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'give title, archived, project_type or language',
    path: ['title'],
  });
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>;

export const ProjectView = z.object({
  id: z.string(),
  title: z.string(),
  project_type: z.string(),
  language: ProjectLanguage,
  role: ProjectRoleName,
  archived: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectView = z.infer<typeof ProjectView>;
export const ProjectResponse = z.object({ project: ProjectView });
export const ProjectListResponse = z.object({ projects: z.array(ProjectView), next_cursor: nextCursor });

/** The notes budget the agent's update_project shares with the author (libs/tools project-notes.ts). */
export const PROJECT_NOTES_MAX_CHARS = 4000;
export const ProjectNotesBody = z.strictObject({
  notes: storableText().max(PROJECT_NOTES_MAX_CHARS),
  expected_version: int4().nonnegative(),
});
export const ProjectNotesResponse = z.object({ notes: z.string(), version: z.number().int() });

export const SessionView = z.object({
  session_id: z.string(),
  project_id: z.string(),
  title: z.string(),
  phase: Phase,
  clarification_pending: z.boolean(),
  last_activity_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SessionView = z.infer<typeof SessionView>;
export const SessionResponse = z.object({ session: SessionView });
/** GET /sessions/:sessionId: `session`, and its fields at the top level as the route answered before. */
export const SessionReadResponse = SessionView.extend({ session: SessionView });
export const SessionListResponse = z.object({ sessions: z.array(SessionView), next_cursor: nextCursor });
export const UpdateSessionBody = z.strictObject({ title });

export const RunTerminal = z.enum(['workflow_complete', 'workflow_stopped', 'error']);
export const MessageView = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  run_id: z.string().nullable(),
  created_at: z.string(),
  run: z
    .object({
      phase: Phase,
      stop_reason: z.string().nullable(),
      terminal: RunTerminal.nullable(),
      error_code: z.string().nullable(),
    })
    .optional(),
  file_operations: z.array(FileOperation),
});
export type MessageView = z.infer<typeof MessageView>;
export const MessageListResponse = z.object({ messages: z.array(MessageView), next_cursor: nextCursor });
export const RunSummaryView = z.object({
  run_id: z.string(),
  phase: Phase,
  stop_reason: z.string().nullable(),
  terminal: RunTerminal.nullable(),
  error_code: z.string().nullable(),
  billing_decision: z.enum(['charge', 'refund']).nullable(),
  created_at: z.string(),
  ended_at: z.string().nullable(),
});
export const RunListResponse = z.object({ runs: z.array(RunSummaryView), next_cursor: nextCursor });

export const ProjectMemberParams = z.object({ projectId: z.uuid(), userId: z.uuid() });
const email = storableText().trim().toLowerCase().max(254).pipe(z.email());
export const AddMemberBody = z
  .strictObject({ user_id: z.uuid().optional(), email: email.optional(), role: GrantableRole })
  .refine((body) => (body.user_id === undefined) !== (body.email === undefined), {
    message: 'give user_id or email (one of them)',
    path: ['user_id'],
  });
export type AddMemberBody = z.infer<typeof AddMemberBody>;
export const UpdateMemberBody = z.strictObject({ role: GrantableRole });
export const MemberView = z.object({
  user_id: z.string(),
  email: z.string(),
  display_name: z.string(),
  role: ProjectRoleName,
});
export const MemberResponse = z.object({ member: MemberView });
export const MemberListResponse = z.object({ members: z.array(MemberView) });

export const UserView = z.object({
  id: z.string(),
  email: z.string(),
  display_name: z.string(),
  role: z.enum(['user', 'admin']),
  created_at: z.string(),
});
export const UserResponse = z.object({ user: UserView });
export const CreateUserBody = z.strictObject({
  email,
  display_name: storableText().trim().min(1).max(100),
  role: z.enum(['user', 'admin']).default('user'),
});
export type CreateUserBody = z.infer<typeof CreateUserBody>;

export const ApiKeyParams = z.object({ keyId: z.uuid() });
export const CreateApiKeyBody = z.strictObject({ name: storableText().trim().min(1).max(100) });
export const ApiKeyView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  /** Runs started with this key (charged: a credit kept) and their tokens, all time and today (UTC). */
  usage: z.object({
    runs: z.number().int().nonnegative(),
    charged_runs: z.number().int().nonnegative(),
    total_tokens: z.number().int().nonnegative(),
    today_tokens: z.number().int().nonnegative(),
  }),
});
export const ApiKeyListResponse = z.object({ api_keys: z.array(ApiKeyView) });
export const CreatedApiKeyResponse = z.object({
  api_key: ApiKeyView,
  /** The bearer secret, shown this once; only its hash is stored. */
  secret: z.string(),
});
