export { attachReviewFindings } from '../shared-tables/artifacts.ts';
export { appendMessage } from '../shared-tables/messages.ts';
export { deleteEmptyFiles, mergeMessageRouting } from '../shared-tables/routing.ts';
export { answerSessionIfSettled, setSessionPhase } from './phase-writes.ts';
export { saveRunArchive } from './run-archives.ts';
export { copySettledDecisions, createRun, discardIdleRun, finishRun, startRun } from './runs.ts';
