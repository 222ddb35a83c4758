// The context's write functions, and only its code imports them (test/arch/import-rules.ts,
// docs/architecture.md "libs/db, split by owner"); what another owner writes too comes from shared-tables/.
export { clearStoredPrompts, insertContextTrace } from './context-traces.ts';
export { saveRunTurnContext } from './run-turn-contexts.ts';
export { saveCompaction } from './session-history.ts';
