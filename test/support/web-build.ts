import { join } from 'node:path';
import { build } from 'vite';
import { REPO_ROOT } from './service-process.ts';

/** Builds apps/web into apps/web/dist (what the gateway serves at `/`). */
export async function buildWebApp(): Promise<void> {
  // Vitest runs with NODE_ENV=test, which would give React's development build.
  const previous = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      configFile: join(REPO_ROOT, 'apps/web/vite.config.ts'),
      logLevel: 'warn',
      mode: 'production',
    });
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}
