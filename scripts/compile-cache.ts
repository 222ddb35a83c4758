/**
 * Fills Node's compile cache (`NODE_COMPILE_CACHE`) with every module a service loads at start-up,
 * so a service process neither strips TypeScript types nor compiles JavaScript it has compiled
 * before (docs/decisions/0040-compile-cache-and-idle-memory.md). A process that finds its modules
 * there never loads the type-stripping transformer (~20 MB resident) and starts on about a third less
 * CPU.
 *
 *   node scripts/compile-cache.ts [dir]        (default: $NODE_COMPILE_CACHE, else the local dir)
 *
 * The image runs it at build time as the user the services run as: Node keeps one cache
 * directory per user id, Node version and V8 flags, and a service that misses (another uid,
 * other V8 flags, an edited file) only compiles as before. Local stacks (tests, benchmarks,
 * the demo) use `LOCAL_COMPILE_CACHE_DIR`.
 */
import module, { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Where local stacks keep the cache: under node_modules, so `npm ci` starts it afresh. */
export const LOCAL_COMPILE_CACHE_DIR = `${REPO_ROOT}node_modules/.cache/quill-compile`;

const SERVICES = ['gateway', 'router', 'writer', 'reviewer', 'context', 'billing'] as const;

/** How the one-line module that imports an entry point is named (see `fillCompileCache`). */
const ENTRY_SCHEME = 'quill-compile-cache:';

/** The preload every service starts with, then each service's entry point. */
export const ENTRY_POINTS: readonly string[] = [
  'libs/telemetry/src/register.ts',
  ...SERVICES.map((service) => `services/${service}/src/main.ts`),
];

/**
 * Loads each entry point's whole static import graph into the cache without running it.
 * `require()` of an ES module graph with top-level await reads, strips and compiles every module
 * of the graph, then refuses to evaluate it (ERR_REQUIRE_ASYNC_MODULE): every entry point
 * awaits its start-up at the top level, so nothing connects or starts here. An entry point that
 * does not would have run; that fails loudly instead of passing as warmed.
 *
 * Node keys a module's entry by how it was loaded: a service loads its entry point and the
 * preload as ES modules (by `file:` URL), where a `require()`d file is keyed by its path. So
 * each entry point is required through a one-line module that imports it, served by an
 * in-process hook under a fixed name (no file written, no entry left behind per run).
 */
export function fillCompileCache(dir: string): { directory: string } {
  const enabled = module.enableCompileCache(dir);
  if (enabled.status === module.constants.compileCacheStatus.FAILED || !enabled.directory)
    throw new Error(`compile cache not enabled at ${dir}: ${enabled.message ?? 'unknown reason'}`);
  const hooks = module.registerHooks({
    resolve: (specifier, context, nextResolve) =>
      specifier.startsWith(ENTRY_SCHEME)
        ? { url: specifier, format: 'module', shortCircuit: true }
        : nextResolve(specifier, context),
    load: (url, context, nextLoad) =>
      url.startsWith(ENTRY_SCHEME)
        ? {
            format: 'module',
            source: `import ${JSON.stringify(pathToFileURL(`${REPO_ROOT}${url.slice(ENTRY_SCHEME.length)}`).href)};`,
            shortCircuit: true,
          }
        : nextLoad(url, context),
  });
  try {
    const require = createRequire(import.meta.url);
    for (const entry of ENTRY_POINTS) {
      try {
        require(`${ENTRY_SCHEME}${entry}`);
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_REQUIRE_ASYNC_MODULE') continue;
        throw error;
      }
      throw new Error(
        `${entry} ran when loaded for the compile cache: it must await its start-up at the top level`,
      );
    }
  } finally {
    hooks.deregister();
  }
  module.flushCompileCache();
  return { directory: enabled.directory };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? process.env.NODE_COMPILE_CACHE ?? LOCAL_COMPILE_CACHE_DIR;
  const started = performance.now();
  const { directory } = fillCompileCache(dir);
  console.log(`compile cache: ${directory} (${Math.round(performance.now() - started)} ms)`);
}
