import { join } from 'node:path';
import { build } from 'vite';
import { REPO_ROOT } from './service-process.ts';

/**
 * Builds apps/web into `outDir` (default apps/web/dist, what a gateway serves at `/`). Tests build
 * into a folder of their own (GATEWAY_WEB_DIST), so a gateway another test file starts meanwhile
 * never reads a half-written dist.
 */
export async function buildWebApp(outDir?: string): Promise<void> {
  // Vitest runs with NODE_ENV=test, which would give React's development build.
  const previous = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      configFile: join(REPO_ROOT, 'apps/web/vite.config.ts'),
      logLevel: 'warn',
      mode: 'production',
      ...(outDir ? { build: { outDir, emptyOutDir: true } } : {}),
    });
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}
