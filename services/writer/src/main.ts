import { parseRoles, startRoleWorkers } from '@quill/agent-runtime';
import { WRITE_CAPABLE_ROLES } from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { writerPromptFor } from './prompts.ts';

const runtime = await startService('writer');
const roles = parseRoles(runtime.config.ROLES, WRITE_CAPABLE_ROLES);
await startRoleWorkers(runtime, roles, writerPromptFor);
