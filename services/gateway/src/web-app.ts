import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where `npm run build -w apps/web` (and `npm run demo`) put the author's web app. */
export const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../../apps/web/dist', import.meta.url));

/** The built app's folder when it has been built, else undefined (the API runs without it). */
export function findWebDist(directory = DEFAULT_WEB_DIST): string | undefined {
  return existsSync(join(directory, 'index.html')) ? directory : undefined;
}

/**
 * The web app at `/`, the API staying under `/api/v1` (README "Web app"). The app is one page with
 * no client-side routes, so nothing but its files is served; an unknown path falls through to
 * the API's own 404 body. Hashed assets are immutable; index.html is revalidated every time so a
 * new build is picked up at once.
 */
export async function installWebApp(app: FastifyInstance, root: string): Promise<void> {
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    index: ['index.html'],
    // The API's paths never reach the file system: its 404 / 405 bodies stay the catalog's.
    allowedPath: (pathName) => !pathName.startsWith('/api/'),
    setHeaders(reply, path) {
      reply.header(
        'cache-control',
        path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
      );
    },
  });
}
