import { type ApiRoute, ok, route } from './api-route.ts';
import { KERNEL_ROUTES } from './api-routes-kernel.ts';
import {
  AcceptArtifactBody,
  ArtifactDecisionResponse,
  ArtifactListQuery,
  ArtifactListResponse,
  ProjectArtifactParams,
  ProjectSettingsBody,
  ProjectSettingsResponse,
  RejectArtifactBody,
  RequestRevisionBody,
  RevisionResponse,
  RunArtifactsResponse,
  SessionDefinitionsResponse,
} from './artifacts.ts';
import { ContextTraceResponse, FileVisibilityBody } from './context.ts';
import {
  AcceptDraftBody,
  AgentSteerBody,
  AgentStopBody,
  AgentStreamBody,
  AgentSuggestBody,
  AgentSuggestResponse,
  CreateFileBody,
  GrantCreditsBody,
  GrantCreditsResponse,
  ProjectFileParams,
  ProjectFileVersionParams,
  ProjectIdParams,
  QuotaResponse,
  RevertFileBody,
  RunIdParams,
  SessionIdParams,
  TokenRequestBody,
  UpdateFileBody,
  UsageTodayResponse,
  UserIdParams,
} from './http.ts';
import {
  AddMemberBody,
  ApiKeyListResponse,
  ApiKeyParams,
  CreateApiKeyBody,
  CreatedApiKeyResponse,
  CreateProjectBody,
  CreateUserBody,
  ListProjectsQuery,
  MemberListResponse,
  MemberResponse,
  MessageListResponse,
  PageQuery,
  ProjectListResponse,
  ProjectMemberParams,
  ProjectNotesBody,
  ProjectNotesResponse,
  ProjectResponse,
  RunListResponse,
  SessionListResponse,
  SessionReadResponse,
  SessionResponse,
  UpdateMemberBody,
  UpdateProjectBody,
  UpdateSessionBody,
  UserResponse,
} from './product.ts';
import { ExportQuery } from './project-archive.ts';
import { SkillNameParams, SkillPatchBody } from './skills.ts';
import { RunEventsQuery, RunEventsResponse, StreamQuery, StreamTicketResponse } from './stream-ticket.ts';

export type { ApiRoute, HttpMethod } from './api-route.ts';

/**
 * Every route of the HTTP API (README "HTTP API"): the source of the OpenAPI document and of the
 * fuzz test's requests. A test fails when the gateway serves a route that is not listed here.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  route('GET', '/health', 'Dependencies, config conflicts and LLM breakers', { auth: false }),
  route('GET', '/openapi.json', 'This API as an OpenAPI 3.1 document', { auth: false }),
  route('POST', '/auth/token', 'Exchange an API key for a short-lived access token', {
    auth: false,
    body: TokenRequestBody,
  }),
  route('POST', '/agent/stream', 'Start a run and stream its frames (SSE)', {
    body: AgentStreamBody,
    success: { status: 200, sse: true },
  }),
  route('GET', '/agent/runs/:runId/stream', 'Resume a run stream after Last-Event-ID (SSE; 204 after done)', {
    params: RunIdParams,
    query: StreamQuery,
    success: { status: 200, sse: true },
  }),
  route(
    'GET',
    '/agent/runs/:runId/events',
    "A run's frames with their SSE ids, from the stream or the run archive",
    {
      params: RunIdParams,
      query: RunEventsQuery,
      success: ok(RunEventsResponse),
    },
  ),
  route('POST', '/agent/runs/:runId/stream-ticket', 'Mint a single-use ticket for a native EventSource', {
    params: RunIdParams,
    success: { status: 201, body: StreamTicketResponse },
  }),
  route('POST', '/agent/stop', 'Stop a run', { body: AgentStopBody, success: { status: 202 } }),
  route('POST', '/agent/steer', 'Send an interjection to the running run', {
    body: AgentSteerBody,
    success: { status: 202 },
  }),
  route('GET', '/agent/runs/:runId', 'A run: phase, stop reason, billing, counters', { params: RunIdParams }),
  route('GET', '/agent/runs/:runId/context-trace', "A run's context trace (project owner only)", {
    params: RunIdParams,
    success: ok(ContextTraceResponse),
  }),
  route('GET', '/sessions/:sessionId', 'A session: title, phase, last activity', {
    params: SessionIdParams,
    success: ok(SessionReadResponse),
  }),
  route('PATCH', '/sessions/:sessionId', 'Rename a session', {
    params: SessionIdParams,
    body: UpdateSessionBody,
    success: ok(SessionResponse),
  }),
  route('DELETE', '/sessions/:sessionId', 'Delete a session (409 while a run is active)', {
    params: SessionIdParams,
    success: { status: 204 },
  }),
  route('GET', '/sessions/:sessionId/messages', "A session's messages, oldest first, with their runs", {
    params: SessionIdParams,
    query: PageQuery,
    success: ok(MessageListResponse),
  }),
  route('GET', '/sessions/:sessionId/runs', "A session's runs, oldest first", {
    params: SessionIdParams,
    query: PageQuery,
    success: ok(RunListResponse),
  }),
  route('GET', '/projects', "The caller's projects, most recently changed first", {
    query: ListProjectsQuery,
    success: ok(ProjectListResponse),
  }),
  route('POST', '/projects', 'Create a project (the caller owns it)', {
    body: CreateProjectBody,
    success: { status: 201, body: ProjectResponse },
  }),
  route('GET', '/projects/:projectId', "A project with the caller's role", {
    params: ProjectIdParams,
    success: ok(ProjectResponse),
  }),
  route('PATCH', '/projects/:projectId', 'Rename, retype or archive a project', {
    params: ProjectIdParams,
    body: UpdateProjectBody,
    success: ok(ProjectResponse),
  }),
  route('DELETE', '/projects/:projectId', 'Delete a project (soft; restorable)', {
    params: ProjectIdParams,
    success: { status: 204 },
  }),
  route('POST', '/projects/:projectId/restore', 'Restore a deleted project', {
    params: ProjectIdParams,
    success: ok(ProjectResponse),
  }),
  route('GET', '/projects/:projectId/notes', "The project's notes (the agent's memory) and version", {
    params: ProjectIdParams,
    success: ok(ProjectNotesResponse),
  }),
  route('PUT', '/projects/:projectId/notes', 'Save the notes (409 on a stale expected_version)', {
    params: ProjectIdParams,
    body: ProjectNotesBody,
    success: ok(ProjectNotesResponse),
  }),
  route('GET', '/projects/:projectId/sessions', "The caller's sessions in a project, newest activity first", {
    params: ProjectIdParams,
    query: PageQuery,
    success: ok(SessionListResponse),
  }),
  route('GET', '/projects/:projectId/members', "The project's members", {
    params: ProjectIdParams,
    success: ok(MemberListResponse),
  }),
  route('POST', '/projects/:projectId/members', 'Add an editor or viewer (owner only)', {
    params: ProjectIdParams,
    body: AddMemberBody,
    success: { status: 201, body: MemberResponse },
  }),
  route('PATCH', '/projects/:projectId/members/:userId', "Change a member's role (owner only)", {
    params: ProjectMemberParams,
    body: UpdateMemberBody,
    success: ok(MemberResponse),
  }),
  route('DELETE', '/projects/:projectId/members/:userId', 'Remove a member (owner), or leave', {
    params: ProjectMemberParams,
    success: { status: 204 },
  }),
  route('GET', '/projects/:projectId/export', 'The project as a zip (manifest + Markdown files)', {
    params: ProjectIdParams,
    query: ExportQuery,
    success: { status: 200, zip: true },
  }),
  route(
    'GET',
    '/projects/:projectId/manuscript.md',
    'The manuscript as one Markdown file, in chapter order',
    {
      params: ProjectIdParams,
      query: ExportQuery,
      success: { status: 200, markdown: true },
    },
  ),
  route('POST', '/projects/import', 'Import a project zip as a new project', {
    body: 'zip',
    success: { status: 201, body: ProjectResponse },
  }),
  route('GET', '/me', 'The caller', { success: ok(UserResponse) }),
  route('GET', '/me/api-keys', "The caller's API keys (prefix only)", { success: ok(ApiKeyListResponse) }),
  route('POST', '/me/api-keys', 'Create an API key (its secret is shown once)', {
    body: CreateApiKeyBody,
    success: { status: 201, body: CreatedApiKeyResponse },
  }),
  route('DELETE', '/me/api-keys/:keyId', 'Revoke an API key', {
    params: ApiKeyParams,
    success: { status: 204 },
  }),
  route('POST', '/admin/users', 'Create a user (admin only)', {
    body: CreateUserBody,
    success: { status: 201, body: UserResponse },
  }),
  route('GET', '/usage/today', "The caller's tokens today", { success: ok(UsageTodayResponse) }),
  route('GET', '/quota', "The caller's credits and daily cap", { success: ok(QuotaResponse) }),
  route('POST', '/admin/users/:userId/credits', 'Grant credits (admin only)', {
    params: UserIdParams,
    body: GrantCreditsBody,
    success: ok(GrantCreditsResponse),
  }),
  route('POST', '/agent/suggest', 'Next-step suggestions (a model call)', {
    body: AgentSuggestBody,
    success: ok(AgentSuggestResponse),
  }),
  route('GET', '/projects/:projectId/files', "The project's live files", { params: ProjectIdParams }),
  route('POST', '/projects/:projectId/files', 'Create a file', {
    params: ProjectIdParams,
    body: CreateFileBody,
    success: { status: 201 },
  }),
  route('GET', '/projects/:projectId/files/:fileId', 'One file with its text', { params: ProjectFileParams }),
  route('PUT', '/projects/:projectId/files/:fileId', 'Save a new author version', {
    params: ProjectFileParams,
    body: UpdateFileBody,
  }),
  route('DELETE', '/projects/:projectId/files/:fileId', 'Delete a file (soft)', {
    params: ProjectFileParams,
    success: { status: 204 },
  }),
  route(
    'GET',
    '/projects/:projectId/files/:fileId/versions/:version',
    'One version of a file, with its text',
    {
      params: ProjectFileVersionParams,
    },
  ),
  route('GET', '/projects/:projectId/files/:fileId/versions', "A file's history", {
    params: ProjectFileParams,
  }),
  route('POST', '/projects/:projectId/files/:fileId/revert', 'Revert to an old version (as a new one)', {
    params: ProjectFileParams,
    body: RevertFileBody,
  }),
  route(
    'POST',
    '/projects/:projectId/files/:fileId/accept-draft',
    "Accept an AI draft as the original's text",
    {
      params: ProjectFileParams,
      body: AcceptDraftBody,
    },
  ),
  route('GET', '/projects/:projectId/artifacts', "The project's AI artifacts and their acceptance state", {
    params: ProjectIdParams,
    query: ArtifactListQuery,
    success: ok(ArtifactListResponse),
  }),
  route('GET', '/agent/runs/:runId/artifacts', "A run's artifacts; whether any await acceptance", {
    params: RunIdParams,
    success: ok(RunArtifactsResponse),
  }),
  route(
    'POST',
    '/projects/:projectId/artifacts/:artifactId/accept',
    "Accept an artifact as the file's text",
    {
      params: ProjectArtifactParams,
      body: AcceptArtifactBody,
      success: ok(ArtifactDecisionResponse),
    },
  ),
  route(
    'POST',
    '/projects/:projectId/artifacts/:artifactId/reject',
    'Reject an artifact (the previous text stays)',
    {
      params: ProjectArtifactParams,
      body: RejectArtifactBody,
      success: ok(ArtifactDecisionResponse),
    },
  ),
  route(
    'POST',
    '/projects/:projectId/artifacts/:artifactId/request-revision',
    'Ask for a revision with a comment (starts a revision run)',
    {
      params: ProjectArtifactParams,
      body: RequestRevisionBody,
      success: { status: 202, body: RevisionResponse },
    },
  ),
  route('GET', '/projects/:projectId/settings', "The project's acceptance setting", {
    params: ProjectIdParams,
    success: ok(ProjectSettingsResponse),
  }),
  route(
    'PUT',
    '/projects/:projectId/settings',
    'Review AI texts before they count, or accept them as saved',
    {
      params: ProjectIdParams,
      body: ProjectSettingsBody,
      success: ok(ProjectSettingsResponse),
    },
  ),
  route('GET', '/sessions/:sessionId/definitions', 'The role definitions a session is pinned to', {
    params: SessionIdParams,
    success: ok(SessionDefinitionsResponse),
  }),
  route('POST', '/sessions/:sessionId/definitions/upgrade', 'Re-pin a session to the current definitions', {
    params: SessionIdParams,
    success: ok(SessionDefinitionsResponse),
  }),
  route('PUT', '/projects/:projectId/files/:fileId/visibility', 'Which agent roles may see a file', {
    params: ProjectFileParams,
    body: FileVisibilityBody,
  }),
  ...KERNEL_ROUTES,
  route('POST', '/skills/import', 'Import a skill package (zip)', { body: 'zip', success: { status: 201 } }),
  route('GET', '/skills', "The caller's skills"),
  route('PATCH', '/skills/:name', 'Enable or disable a skill', {
    params: SkillNameParams,
    body: SkillPatchBody,
  }),
  route('GET', '/skills/:name/export', 'A skill package as a zip', {
    params: SkillNameParams,
    success: { status: 200, zip: true },
  }),
  route('DELETE', '/skills/:name', 'Delete a skill', { params: SkillNameParams, success: { status: 204 } }),
];
