export { type DerivedSettings, deriveSettings } from './derived.ts';
export {
  type Config,
  type ConfigConflict,
  ConfigError,
  type ConfigSource,
  loadConfig,
  maskValue,
} from './load.ts';
export { CONFIG_KEYS, ConfigSchema, type ConfigValues } from './schema.ts';
export { PUBLIC_DEFAULT_SECRETS, productionSecretIssues, type SecretUse } from './secrets.ts';
