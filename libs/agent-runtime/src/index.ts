export { composeDirective } from './protocol.ts';
export { parseRoles, startRoleWorkers } from './role-service.ts';
