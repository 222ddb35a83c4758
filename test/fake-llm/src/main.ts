import { parseArgs } from 'node:util';
import { startFakeLlm } from './server.ts';

// CLI: node test/fake-llm/src/main.ts --port 4010 --ttft-ms 0 --tokens-per-second 0
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    'ttft-ms': { type: 'string', default: '0' },
    'tokens-per-second': { type: 'string', default: '0' },
    'max-input-tokens': { type: 'string' },
    model: { type: 'string' },
  },
});

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) {
    console.error(`fake-llm: --${name} must be a non-negative number, got "${value}"`);
    process.exit(2);
  }
  return parsed;
}

const fake = await startFakeLlm({
  port: numberOption('port', values.port),
  host: values.host,
  ttftMs: numberOption('ttft-ms', values['ttft-ms']),
  tokensPerSecond: numberOption('tokens-per-second', values['tokens-per-second']),
  maxInputTokens: numberOption('max-input-tokens', values['max-input-tokens']),
  model: values.model,
});
console.log(`fake-llm listening on ${fake.url}`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  fake.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('fake-llm: close failed', error);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
