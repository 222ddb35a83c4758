// The workers' (writer, reviewer, libs/agent-runtime, libs/tools) write functions; only their code
// imports them (docs/architecture.md "libs/db, split by owner"). recordSkillRead still lives in
// gateway/skills.ts, next to the skills it reads; skill_reads is the workers' table.
export { recordSkillRead } from '../gateway/skills.ts';
export { attachReviewFindings, recordAiArtifact } from '../shared-tables/artifacts.ts';
export { seedRoleDefinition, startRunStep } from '../shared-tables/definitions.ts';
export { setFileTitle, softDeleteFiles } from '../shared-tables/file-edits.ts';
export { createFile, saveFileContent } from '../shared-tables/files.ts';
export { updateProjectWorkspace } from '../shared-tables/project-workspace.ts';
export { commitProjectNotes, commitState } from '../shared-tables/state-commits.ts';
export { saveAiBody } from './ai-writes.ts';
export { deleteEmptyFiles } from './blank-files.ts';
export { writeHistoryArchive } from './history-archive.ts';
export { bumpRunEpoch } from './run-fence.ts';
export { saveFencedStepJournal, saveStepJournal } from './step-journals.ts';
