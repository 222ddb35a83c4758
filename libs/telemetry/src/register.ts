/**
 * Preloaded with `node --import @quill/telemetry/register services/<name>/src/main.ts`. It must run
 * before the service imports pg, ioredis, fastify or node:http, which is why it is a preload and
 * why, unlike every other module, importing it has side effects.
 */
import { loadConfig } from '@quill/config';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { register } from 'import-in-the-middle/register-hooks.mjs';
import { parseResourceAttributes } from './exporters.ts';
import { installTelemetryHandle } from './handle.ts';
import { startTelemetry } from './sdk.ts';
import { resolveServiceName } from './service-name.ts';

// The message channel makes the loader wrap only the modules instrumentations asked for; the
// bare hook would wrap every module of the service, .ts sources included. The hooks run in the
// service's own thread (`module.registerHooks`): the off-thread loader of `module.register` is a
// second V8 isolate, ~20 MB resident in every process, and an IPC round trip per import.
const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
register(registerOptions.data);

const config = loadConfig();
const handle = await startTelemetry({
  serviceName: resolveServiceName(config.OTEL_SERVICE_NAME, process.argv[1]),
  instanceId: config.instanceId,
  environment: config.NODE_ENV,
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL,
  resourceAttributes: parseResourceAttributes(config.OTEL_RESOURCE_ATTRIBUTES),
  samplerRatio: config.OTEL_TRACES_SAMPLER_RATIO,
});
installTelemetryHandle(handle);

// Until the loader thread has the module list, an import by main.ts could slip past unpatched.
await waitForAllMessagesAcknowledged();
