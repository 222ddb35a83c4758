// Pool, migrations, ids and every read: any package may import this entry. It exports no function
// that writes (test/architecture/table-owners.test.ts); those are in @quill/db/<owner>.
export { withAdvisoryLockPass } from './advisory-lock.ts';
export { getCredits, getQuotaAccount } from './billing/quota.ts';
export { tokensUsedToday, usageTodayByModel } from './billing/usage.ts';
export { readCompileBasics } from './context/compile-inputs.ts';
export { getCompiledStepContext, listContextTraces } from './context/context-traces.ts';
export {
  getLatestCompaction,
  type HistoryCompaction,
  type HistoryMessage,
  listHistoryMessages,
} from './context/session-history.ts';
export {
  type FileSummary,
  type FileText,
  listRunWrittenFileIds,
  readFileTexts,
  titleSimilarities,
  type UnacceptedState,
} from './context-files.ts';
export type { ArtifactDecision } from './gateway/artifact-decisions.ts';
export {
  activePathMessages,
  type Branch,
  forkSnapshotRun,
  getBranch,
  listBranches,
} from './gateway/branches.ts';
export type { ExternalIdentity } from './gateway/external-identities.ts';
export { listProjectsPage } from './gateway/project-admin.ts';
export { getProjectMember, listProjectMembers, type ProjectMember } from './gateway/project-members.ts';
export {
  getProject,
  getProjectForUser,
  type ProjectMembership,
  type ProjectRole,
} from './gateway/projects.ts';
export type { RestoreOutcome } from './gateway/restore.ts';
export type { RestoreConflict } from './gateway/restore-plan.ts';
export {
  listSessionMessagesPage,
  listSessionRunsPage,
  listSessionsPage,
  type RunSummary,
  type SessionMessage,
} from './gateway/session-listing.ts';
export { getSession, getSessionForUser, type Session } from './gateway/sessions.ts';
export {
  getRunSkill,
  getSkillVersionResource,
  listRunSkills,
  listRunSkillVersions,
  type RunSkill,
  sessionSkillVersions,
} from './gateway/skill-versions.ts';
export {
  getSkill,
  listSkillResourceContents,
  listSkills,
  type Skill,
  type SkillPackageInput,
  type SkillSummary,
  skillReadUsage,
} from './gateway/skills.ts';
export {
  currentProjectState,
  fileTextAt,
  getRunStartSnapshot,
  getSnapshot,
  listSnapshotsPage,
  type Snapshot,
  type SnapshotState,
} from './gateway/snapshots.ts';
export {
  type ApiKeySummary,
  findUserByEmail,
  getUser,
  hashApiKey,
  listApiKeys,
  type User,
  type UserRole,
} from './gateway/users.ts';
export { HISTORY_ARCHIVE_FILE_TYPE, historyArchiveTitleOf } from './history-archive.ts';
export { isUuid } from './ids.ts';
export { adminUrl, ensureDatabase, migrate, readMigrations } from './migrate.ts';
export { createPool, PG_ERROR, pgErrorCode, type Queryable, withTransaction } from './pool.ts';
export type { PhaseWrite } from './router/phase-writes.ts';
export { type ArchivedFrame, getArchivedFrames } from './router/run-archives.ts';
export {
  type FinishRunInput,
  getActiveRunForSession,
  getRun,
  getRunForUser,
  listRunningRunsOlderThan,
  listUnarchivedEndedRuns,
  listUnsettledEndedRuns,
  type Run,
  type UnsettledRun,
} from './router/runs.ts';
export { getPreRunContents } from './run-file-changes.ts';
export {
  type Artifact,
  findDraftArtifact,
  getArtifact,
  getArtifactAcceptance,
  listArtifacts,
  runAwaitsAcceptance,
} from './shared-tables/artifacts.ts';
export {
  listRunDefinitions,
  type RoleDefinition,
  type StepStart,
  sessionDefinitions,
} from './shared-tables/definitions.ts';
export {
  findFileByTitle,
  findFilesByText,
  hasAuthorVersionAfter,
  latestVersionBySource,
  lockFile,
  lockFilesUnderFolder,
} from './shared-tables/file-edits.ts';
export {
  type FileVersion,
  getFile,
  getFileVersion,
  listFiles,
  listFileVersions,
  type ProjectFile,
} from './shared-tables/files.ts';
export { listMessages } from './shared-tables/messages.ts';
export { getProjectWorkspace } from './shared-tables/project-workspace.ts';
export { listWaitingRuns, type RoutingContext, readRoutingContext } from './shared-tables/routing.ts';
export {
  agentBaseRev,
  type CommitOutcome,
  listStateCommits,
  readState,
  type StateKey,
} from './shared-tables/state-commits.ts';
export { isTransientDbError, retryTransient } from './transient.ts';
export { findAiWrite } from './workers/ai-writes.ts';
export { DEFAULT_WRITE_RETRY_MS, type RunFence, RunFencedError, withRunFence } from './workers/run-fence.ts';
export { loadStepJournal } from './workers/step-journals.ts';
