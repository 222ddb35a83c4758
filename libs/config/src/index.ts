export { type Config, type ConfigConflict, loadConfig, maskValue } from './load.ts';
export { CONFIG_KEYS, ConfigSchema } from './schema.ts';
export type { SecretUse } from './secrets.ts';
