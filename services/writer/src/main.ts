import { parseRoles, startRoleWorkers } from '@quill/agent-runtime';
import { WRITE_CAPABLE_ROLES } from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { seedWriterDefinitions, writerDirective } from './prompts.ts';

const runtime = await startService('writer');
const roles = parseRoles(runtime.config.ROLES, WRITE_CAPABLE_ROLES);
await seedWriterDefinitions(runtime.pool, roles, runtime.config);
await startRoleWorkers(runtime, roles, (task) => writerDirective(runtime.pool, task));
