export { type ServiceRuntime, startService } from './bootstrap.ts';
