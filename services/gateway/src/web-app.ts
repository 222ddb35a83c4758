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
 * no client-side routes, so nothing but its files is served; an unknown path gets the API's own
 * 404 body. Hashed assets are immutable; index.html is revalidated every time so a
 * new build is picked up at once.
 */
export async function installWebApp(app: FastifyInstance, root: string): Promise<void> {
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    index: ['index.html'],
    // One route per built file instead of a `/*` catch-all: a catch-all would also match API paths
    // the router refuses (an over-long segment is 414 uri_too_long, README "HTTP API") and turn
    // them into 404s. A rebuilt app needs a gateway restart, as any deploy does.
    wildcard: false,
    setHeaders(reply, path) {
      reply.header(
        'cache-control',
        path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
      );
    },
  });
}
