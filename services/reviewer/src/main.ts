import { startRoleWorkers } from '@quill/agent-runtime';
import { startService } from '@quill/service-kit';
import { QUALITY_REVIEWER_PROMPT } from './prompts.ts';

const runtime = await startService('reviewer');
await startRoleWorkers(runtime, ['quality_reviewer'], () => QUALITY_REVIEWER_PROMPT);
