import { parseRoles, startRoleWorkers } from '@quill/agent-runtime';
import { WRITE_CAPABLE_ROLES } from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { writerDirective } from './prompts.ts';

const runtime = await startService('writer');
await startRoleWorkers(runtime, parseRoles(runtime.config.ROLES, WRITE_CAPABLE_ROLES), writerDirective);
