export { type ServiceRuntime, startService } from './bootstrap.ts';
export { type OpsServer, type ReadinessState, startOpsServer } from './ops-server.ts';
export { installShutdown } from './shutdown.ts';
