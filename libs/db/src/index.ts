export { findAiWrite, saveAiBody } from './ai-writes.ts';
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
  attachReviewFindings,
  findDraftArtifact,
  getArtifact,
  getArtifactAcceptance,
  listArtifacts,
  recordAiArtifact,
  runAwaitsAcceptance,
  sessionAwaitsAcceptance,
  setArtifactAcceptance,
} from './artifacts.ts';
export {
  activePathMessages,
  type Branch,
  createBranch,
  ensureActiveBranch,
  forkSnapshotRun,
  getBranch,
  listBranches,
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
export { insertContextTrace, listContextTraces } from './context-traces.ts';
export {
  buildRoleDefinition,
  type DefinitionSettings,
  listRunDefinitions,
  pinnedRolePrompt,
  pinSessionDefinitions,
  seedRoleDefinition,
  sessionDefinitions,
  upgradeSessionDefinitions,
} from './definitions.ts';
export { type ExternalIdentity, userForExternalIdentity } from './external-identities.ts';
export {
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
  type FileVersion,
  getFile,
  getFileVersion,
  listFiles,
  listFileVersions,
  type ProjectFile,
  saveFileContent,
  softDeleteFile,
} from './files.ts';
export { isUuid } from './ids.ts';
export { appendMessage, listMessages } from './messages.ts';
export { adminUrl, ensureDatabase, migrate, readMigrations } from './migrate.ts';
export { answerSessionIfSettled, type PhaseWrite } from './phase-writes.ts';
export { createPool, PG_ERROR, pgErrorCode, type Queryable, withTransaction } from './pool.ts';
export { listProjectsPage, restoreProject, softDeleteProject, updateProject } from './project-admin.ts';
export { importProject } from './project-import.ts';
export {
  getProjectMember,
  insertProjectMember,
  listProjectMembers,
  type ProjectMember,
  removeProjectMember,
  setProjectMemberRole,
} from './project-members.ts';
export { getProjectWorkspace, updateProjectWorkspace } from './project-workspace.ts';
export {
  addProjectMember,
  createProject,
  getProject,
  getProjectForUser,
  type ProjectMembership,
  type ProjectRole,
} from './projects.ts';
export { ensureQuotaAccount, getCredits, getQuotaAccount } from './quota.ts';
export { type RestoreOutcome, restoreSnapshot, undoRun } from './restore.ts';
export type { RestoreConflict } from './restore-plan.ts';
export {
  deleteEmptyFiles,
  getMessageRouting,
  listWaitingRuns,
  mergeMessageRouting,
  projectHasAssistantReply,
} from './routing.ts';
export { type ArchivedFrame, type ArchivedStep, getArchivedFrames, saveRunArchive } from './run-archives.ts';
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
  startRun,
  type UnsettledRun,
} from './runs.ts';
export { seedDemo } from './seed.ts';
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
  type SnapshotState,
  takeSnapshot,
} from './snapshots.ts';
export {
  agentBaseRev,
  type CommitOutcome,
  commitProjectNotes,
  commitState,
  listStateCommits,
  readState,
  type StateKey,
} from './state-commits.ts';

export { loadStepJournal, saveStepJournal } from './step-journals.ts';
export { isTransientDbError, retryTransient } from './transient.ts';
export { recordUsage, tokensUsedToday, usageTodayByModel } from './usage.ts';
export {
  type ApiKeySummary,
  createApiKey,
  createUser,
  findApiKeyUser,
  findUserByApiKey,
  findUserByEmail,
  getUser,
  listApiKeys,
  revokeApiKey,
  storeApiKey,
  type User,
  type UserRole,
} from './users.ts';
