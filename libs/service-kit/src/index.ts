export { type ServiceRuntime, startService } from './bootstrap.ts';
export { installShutdown } from './shutdown.ts';
