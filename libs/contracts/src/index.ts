// The public surface of the contracts (docs/architecture.md "Boundaries"): a module whose every
// export some other package imports is re-exported whole; the others by name, so what only
// contracts itself uses (response schemas the route table reads, helpers its own tests import from
// the module) stays inside. A new export another package needs goes into its module's list here.
export * from './api-routes.ts';
export {
  AcceptArtifactBody,
  ArtifactListQuery,
  ArtifactView,
  ProjectArtifactParams,
  ProjectSettingsBody,
  RejectArtifactBody,
  RequestRevisionBody,
} from './artifacts.ts';
export * from './chapters.ts';
export * from './chat.ts';
export {
  Breadcrumbs,
  ContextSource,
  ContextTier,
  ContextTrace,
  ContextTraceResponse,
  FILE_VISIBILITY_ALL,
  FileOperation,
  FileRef,
  FileVisibilityBody,
  filePermission,
  MAX_SKILLS_PER_REQUEST,
  SKILL_NAME_MAX_LENGTH,
  SKILL_NAME_PATTERN,
  TraceExcluded,
  TraceLoaded,
} from './context.ts';
export {
  ApiKeyRevokedEnvelope,
  BillingBalanceReply,
  BillingBalanceRequest,
  BillingDecision,
  BillingGrantReply,
  BillingGrantRequest,
  BillingReserveReply,
  BillingReserveRequest,
  BillingSettleReply,
  BillingSettleRequest,
  BlankFilesTask,
  ContextCompileReply,
  ContextCompileRequest,
  ControlEnvelope,
  EventEnvelope,
  FileWrite,
  HealthReply,
  isReplicaFailure,
  RoleTaskMessage,
  RunEndReply,
  RunEndRequest,
  RunOpenReply,
  RunOpenRequest,
  RunOutcome,
  RunStartEnvelope,
  SETTLED_RECORD_MAX_BYTES,
  SessionReviewedReply,
  SessionReviewedRequest,
  type SettledRunRecord,
  StepRecordEnvelope,
  StepResult,
  TaskEnvelope,
  UsageEnvelope,
} from './envelopes.ts';
export * from './error-messages.ts';
export { ERROR_CATALOG, ERROR_CODES, type ErrorCode, errorBody, isErrorCode, QuillError } from './errors.ts';
export {
  BodyPartialReason,
  encodeSseComment,
  encodeSseFrame,
  encodeSseRetry,
  errorFrame,
  FRAME_TYPES,
  type FrameOf,
  frame,
  isTerminalFrame,
  localizeFrame,
  SSE_HEADERS,
  SseFrame,
  standingFrames,
  WORKFLOW_STOPPED_REASONS,
  WorkflowStoppedReason,
} from './frames.ts';
export {
  AcceptDraftBody,
  AgentSteerBody,
  AgentStopBody,
  AgentStreamBody,
  AgentSuggestBody,
  AgentSuggestResponse,
  CreateFileBody,
  ErrorResponse,
  GrantCreditsBody,
  GrantCreditsResponse,
  LastEventIdHeaders,
  MAX_SUGGESTIONS,
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
export * from './language.ts';
export { formatChineseNumber, NUMERAL_CHARACTERS, NUMERAL_PATTERN, parseChineseNumber } from './numerals.ts';
export { buildOpenApiDocument, openApiPath } from './openapi.ts';
export { checkTransition, type PhaseSubject, phasesLeadingTo } from './phase-transitions.ts';
export {
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
  MessageView,
  PageQuery,
  PROJECT_NOTES_MAX_CHARS,
  ProjectListResponse,
  ProjectMemberParams,
  ProjectNotesBody,
  ProjectNotesResponse,
  ProjectResponse,
  ProjectView,
  RunListResponse,
  SessionListResponse,
  SessionReadResponse,
  SessionResponse,
  SessionView,
  UpdateMemberBody,
  UpdateProjectBody,
  UpdateSessionBody,
  UserResponse,
} from './product.ts';
export * from './project-archive.ts';
export {
  AGENT_ROLES,
  AgentRole,
  GenerationMode,
  Phase,
  UiLanguage,
  WorkflowPlanName,
  WRITE_CAPABLE_ROLES,
} from './roles.ts';
export {
  SKILL_ZIP_LIMITS,
  SkillNameParams,
  SkillPatchBody,
  SkillView,
  type SkillZipRejection,
} from './skills.ts';
export {
  CreateBranchBody,
  CreateSnapshotBody,
  ListSnapshotsQuery,
  ProjectSnapshotParams,
  RegenerateBody,
  RestoreBody,
  SessionBranchParams,
  SnapshotDiffQuery,
} from './snapshots.ts';
export * from './sources.ts';
export { ProjectInfoBody, StateCommitsQuery, TaskBoardBody } from './state-commits.ts';
export * from './stream-ticket.ts';
export * from './subjects.ts';
export { INT4_MAX, storableText } from './text.ts';
export { isoNow } from './time.ts';
export * from './tool-billing.ts';
