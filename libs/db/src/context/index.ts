export { createFile, saveFileContent } from '../shared-tables/files.ts';
export { insertContextTrace } from './context-traces.ts';
export { saveRunTurnContext } from './run-turn-contexts.ts';
export { saveCompaction } from './session-history.ts';
