import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

export interface MethodIndex {
  /** The methods some route serves on this URL's path (empty: no route has the path). */
  allowedFor(url: string): string[];
  /** Every method and path registered, catch-alls excluded. */
  routes(): Array<{ method: string; url: string }>;
}

/**
 * Every route's method and path, in a router of their own, so the not-found handler can tell a
 * wrong method on a known path (405 with `allow`, RFC 9110 §15.5.6) from an unknown path. Install
 * before the routes are registered: it learns them from the `onRoute` hook. Catch-all routes
 * (the CORS preflight's `OPTIONS *`) would match every path, so they are left out.
 */
export function createMethodIndex(app: FastifyInstance): MethodIndex {
  const router = FindMyWay({ ignoreTrailingSlash: false });
  const methods = new Set<string>();
  const routes: Array<{ method: string; url: string }> = [];
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    for (const method of [route.method].flat()) {
      methods.add(method);
      routes.push({ method, url: route.url });
      router.on(method as HTTPMethod, route.url, () => undefined);
    }
  });
  return {
    routes: () => [...routes],
    allowedFor(url) {
      const path = url.split('?', 1)[0]!;
      return [...methods].filter((method) => router.find(method as HTTPMethod, path) !== null).sort();
    },
  };
}
