// The router's write functions, and only its code imports them (test/arch/import-rules.ts,
// docs/architecture.md "libs/db, split by owner"); what another owner writes too comes from shared-tables/.
export { appendMessage } from '../shared-tables/messages.ts';
export { mergeMessageRouting } from '../shared-tables/routing.ts';
export { answerSessionIfSettled, setSessionPhase } from './phase-writes.ts';
export { saveRunArchive } from './run-archives.ts';
export { endRunAndSession } from './run-end.ts';
export {
  copySettledDecisions,
  createRun,
  discardIdleRun,
  finishRun,
  startRun,
  takeRun,
} from './runs.ts';
