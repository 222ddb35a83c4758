import { startRoleWorkers } from '@quill/agent-runtime';
import { startService } from '@quill/service-kit';
import { reviewerDirective, seedReviewerDefinition } from './prompts.ts';

const runtime = await startService('reviewer');
await seedReviewerDefinition(runtime.pool, runtime.config);
await startRoleWorkers(runtime, ['quality_reviewer'], (task) => reviewerDirective(runtime.pool, task));
