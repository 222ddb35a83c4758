export {
  type AiBodyInput,
  type AiBodySave,
  DRAFT_SUFFIX,
  type DraftReason,
  draftTitle,
  findAiWrite,
  saveAiBody,
} from './ai-writes.ts';
export {
  type ArtifactDecision,
  acceptArtifact,
  linkRevisionRun,
  rejectArtifact,
  requestArtifactRevision,
  undoArtifactDecision,
} from './artifact-decisions.ts';
export {
  type Artifact,
  type ArtifactAcceptance,
  type ArtifactFinding,
  type ArtifactPlacement,
  type ArtifactState,
  attachReviewFindings,
  findDraftArtifact,
  getArtifact,
  getArtifactAcceptance,
  listArtifacts,
  listUnacceptedTexts,
  OPEN_ARTIFACT_STATES,
  recordAiArtifact,
  runAwaitsAcceptance,
  sessionAwaitsAcceptance,
  setArtifactAcceptance,
  stepOfWriteKey,
  type UnacceptedText,
} from './artifacts.ts';
export {
  activePathMessages,
  type Branch,
  createBranch,
  ensureActiveBranch,
  forkSnapshotRun,
  getBranch,
  listBranches,
  type PathMessage,
  setActiveBranch,
  setBranchHead,
} from './branches.ts';
export {
  type FileSearchHit,
  type FileSummary,
  getFileContents,
  getProjectTaskBoard,
  listFileSummaries,
  listRunWrittenFileIds,
  searchFiles,
  setFileVisibility,
  type UnacceptedState,
} from './context-files.ts';
export { insertContextTrace, listContextTraces, type StoredContextTrace } from './context-traces.ts';
export {
  buildRoleDefinition,
  type DefinitionSettings,
  definitionHash,
  listRunDefinitions,
  type PinnedDefinition,
  pinnedRolePrompt,
  pinSessionDefinitions,
  type RoleDefinition,
  resolveRunDefinition,
  seedRoleDefinition,
  sessionDefinitions,
  upgradeSessionDefinitions,
} from './definitions.ts';
export { type ExternalIdentity, userForExternalIdentity } from './external-identities.ts';
export {
  type FileTextMatch,
  findFileByTitle,
  findFilesByText,
  hasAuthorVersionAfter,
  latestVersionBySource,
  lockFile,
  lockFilesUnderFolder,
  saveFileContentIfVersion,
  setFileTitle,
  softDeleteFiles,
} from './file-edits.ts';
export {
  createFile,
  FileNotFoundError,
  type FileVersion,
  getFile,
  getFileVersion,
  listFiles,
  listFileVersions,
  type ProjectFile,
  saveFileContent,
  softDeleteFile,
  type VersionSource,
} from './files.ts';
export { isUuid } from './ids.ts';
export { appendMessage, listMessages, type Message, type MessageRole } from './messages.ts';
export {
  adminUrl,
  databaseName,
  dropDatabase,
  ensureDatabase,
  MIGRATIONS_DIR,
  type MigrateOptions,
  MigrationError,
  type MigrationFile,
  migrate,
  readMigrations,
} from './migrate.ts';
export { answerSessionIfSettled, applied, movePhase, type PhaseWrite } from './phase-writes.ts';
export {
  createPool,
  int8ToNumber,
  PG_ERROR,
  type PoolOptions,
  pgErrorCode,
  type Queryable,
  timestamptzToIso,
  withTransaction,
} from './pool.ts';
export {
  listProjectsPage,
  restoreProject,
  saveProjectNotesIfVersion,
  softDeleteProject,
  type TimeCursor,
  updateProject,
} from './project-admin.ts';
export { importProject } from './project-import.ts';
export {
  getProjectMember,
  insertProjectMember,
  listProjectMembers,
  type ProjectMember,
  removeProjectMember,
  setProjectMemberRole,
} from './project-members.ts';
export {
  getProjectWorkspace,
  type ProjectWorkspace,
  updateProjectWorkspace,
} from './project-workspace.ts';
export {
  addProjectMember,
  createProject,
  getProject,
  getProjectForUser,
  listProjectsForUser,
  type Project,
  type ProjectMembership,
  type ProjectRole,
} from './projects.ts';
export {
  ensureQuotaAccount,
  getCredits,
  getQuotaAccount,
  type QuotaAccount,
} from './quota.ts';
export { type RestoredFile, type RestoreOutcome, restoreSnapshot, undoRun } from './restore.ts';
export { type ChangedBy, type FileStep, planRestore, type RestoreConflict } from './restore-plan.ts';
export {
  deleteEmptyFiles,
  getMessageRouting,
  listWaitingRuns,
  mergeMessageRouting,
  projectHasAssistantReply,
} from './routing.ts';
export {
  type ArchivedFrame,
  type ArchivedStep,
  getArchivedFrames,
  getArchivedSteps,
  saveRunArchive,
} from './run-archives.ts';
export {
  bumpRunEpoch,
  DEFAULT_WRITE_RETRY_MS,
  type RunFence,
  RunFencedError,
  withRunFence,
} from './run-fence.ts';
export { getPreRunContents } from './run-file-changes.ts';
export { getRunTurnContext, saveRunTurnContext } from './run-turn-contexts.ts';
export {
  ACTIVE_RUN_PHASES,
  copySettledDecisions,
  createRun,
  discardIdleRun,
  type FinishRunInput,
  finishRun,
  getActiveRunForSession,
  getRun,
  getRunForUser,
  listRunningRunsOlderThan,
  listUnarchivedEndedRuns,
  listUnsettledEndedRuns,
  type Run,
  setRunBillingDecision,
  startRun,
  type UnsettledRun,
} from './runs.ts';
export { ApiKeyTakenError, DEMO_EMAIL, DEMO_PROJECT_TITLE, type DemoSeed, seedDemo } from './seed.ts';
export {
  getLatestCompaction,
  type HistoryCompaction,
  type HistoryMessage,
  listHistoryMessages,
  saveCompaction,
} from './session-history.ts';
export {
  listSessionMessagesPage,
  listSessionRunsPage,
  listSessionsPage,
  type RunSummary,
  renameSession,
  type SessionMessage,
  softDeleteSession,
} from './session-listing.ts';
export {
  createSession,
  getSession,
  getSessionForUser,
  listSessions,
  type Session,
  setSessionPhase,
  touchSession,
} from './sessions.ts';
export {
  deleteSkill,
  getSkill,
  getSkillResource,
  listEnabledSkills,
  listSkillResourceContents,
  listSkills,
  recordSkillRead,
  type Skill,
  type SkillPackageInput,
  type SkillReadOutcome,
  type SkillSummary,
  saveSkillPackage,
  setSkillEnabled,
  skillReadUsage,
} from './skills.ts';
export {
  currentProjectState,
  fileTextAt,
  getRunStartSnapshot,
  getSnapshot,
  listSnapshotsPage,
  type Snapshot,
  type SnapshotFile,
  type SnapshotKind,
  type SnapshotState,
  takeSnapshot,
} from './snapshots.ts';
export {
  type CommitOutcome,
  commitProjectNotes,
  listStateCommits,
  mayCommit,
  type StateCommit,
  type StateKey,
  type StateWriter,
} from './state-commits.ts';

export { mergeText, type TextMerge } from './state-merge.ts';
export { loadStepJournal, type StepJournal, saveStepJournal } from './step-journals.ts';
export { isTransientDbError, type RetryPolicy, retryDelay, retryTransient } from './transient.ts';
export {
  type ModelUsage,
  recordUsage,
  tokensUsedToday,
  type UsageTotals,
  usageTodayByModel,
} from './usage.ts';
export {
  API_KEY_PREFIX_LENGTH,
  type ApiKeySummary,
  createApiKey,
  createUser,
  findApiKeyUser,
  findUserByApiKey,
  findUserByEmail,
  generateApiKey,
  getUser,
  hashApiKey,
  listApiKeys,
  revokeApiKey,
  storeApiKey,
  type User,
  type UserRole,
} from './users.ts';
