import { startRoleWorkers } from '@quill/agent-runtime';
import { startService } from '@quill/service-kit';
import { reviewerDirective } from './prompts.ts';

const runtime = await startService('reviewer');
await startRoleWorkers(runtime, ['quality_reviewer'], reviewerDirective);
