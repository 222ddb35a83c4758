// The gateway's write functions, and only its code imports them (test/arch/import-rules.ts,
// docs/architecture.md "libs/db, split by owner"); what another owner writes too comes from shared-tables/.
export { recordAiArtifact, setArtifactAcceptance } from '../shared-tables/artifacts.ts';
export { upgradeSessionDefinitions } from '../shared-tables/definitions.ts';
export { saveFileContentIfVersion, setFileTitle, setFileVisibility } from '../shared-tables/file-edits.ts';
export { createFile, softDeleteFile } from '../shared-tables/files.ts';
export { appendMessage } from '../shared-tables/messages.ts';
export { commitProjectNotes, commitState } from '../shared-tables/state-commits.ts';
export {
  acceptArtifact,
  linkRevisionRun,
  rejectArtifact,
  requestArtifactRevision,
  undoArtifactDecision,
} from './artifact-decisions.ts';
export { createBranch, ensureActiveBranch, setActiveBranch, setBranchHead } from './branches.ts';
export { userForExternalIdentity } from './external-identities.ts';
export { restoreProject, softDeleteProject, updateProject } from './project-admin.ts';
export { importProject } from './project-import.ts';
export { insertProjectMember, removeProjectMember, setProjectMemberRole } from './project-members.ts';
export { addProjectMember, createProject } from './projects.ts';
export { restoreSnapshot, undoRun } from './restore.ts';
export { openLaunchSession, recordRunLaunch } from './run-launch.ts';
export { renameSession, softDeleteSession } from './session-listing.ts';
export { createSession } from './sessions.ts';
export { upgradeSessionSkills } from './skill-versions.ts';
export { deleteSkill, saveSkillPackage, setSkillEnabled } from './skills.ts';
export { takeSnapshot } from './snapshots.ts';
export {
  createApiKey,
  createUser,
  findApiKeyUser,
  findUserByApiKey,
  revokeApiKey,
  storeApiKey,
} from './users.ts';
