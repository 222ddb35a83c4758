export { parseRoles, startRoleWorkers } from './role-service.ts';
