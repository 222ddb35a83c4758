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
  addProjectMember,
  createProject,
  getProject,
  getProjectForUser,
  listProjectsForUser,
  type Project,
  type ProjectRole,
} from './projects.ts';
export { ensureQuotaAccount, getCredits } from './quota.ts';
export { RunFencedError, withRunFence } from './run-fence.ts';
export {
  ACTIVE_RUN_PHASES,
  bumpRunEpoch,
  createRun,
  type FinishRunInput,
  finishRun,
  getActiveRunForSession,
  getRun,
  getRunForUser,
  type Run,
  setRunBillingDecision,
} from './runs.ts';
export { ApiKeyTakenError, DEMO_EMAIL, DEMO_PROJECT_TITLE, type DemoSeed, seedDemo } from './seed.ts';
export {
  createSession,
  getSession,
  getSessionForUser,
  listSessions,
  type Session,
  setSessionPhase,
} from './sessions.ts';
export {
  createApiKey,
  createUser,
  findUserByApiKey,
  findUserByEmail,
  generateApiKey,
  getUser,
  hashApiKey,
  revokeApiKey,
  storeApiKey,
  type User,
  type UserRole,
} from './users.ts';
