import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImport, cycleViolations, type ImportEdge, type RuleId } from './import-rules.ts';
import { importsOf, moduleLevelMapsOf } from './imports.ts';
import { scanWorkspace } from './scan.ts';
import { type PackageKind, REPO_ROOT, type WorkspacePackage } from './workspace.ts';

// The rules are docs/architecture.md "Boundaries".
describe('import boundaries of the repository', () => {
  const scan = scanWorkspace();

  it('scans every package', () => {
    const scanned = new Set(
      scan.files.map((file) => scan.workspace.find((pkg) => file.startsWith(`${pkg.dir}/`))),
    );
    expect(scanned.size).toBe(scan.workspace.length);
    expect(scan.files).toContain('services/gateway/src/main.ts');
    expect(scan.edges.length).toBeGreaterThan(1000);
  });

  it('has no violation', () => {
    expect(scan.violations.map((each) => `${each.rule} ${each.at}: ${each.message}`)).toEqual([]);
  });

  it('builds no connection or client state at import time: module-level maps are pure memo caches only', () => {
    // Each is keyed by immutable data and holds what is derived from it; anything per
    // connection or client lives on the object main.ts builds (e.g. `Bus.state`).
    const memoCaches = new Set([
      'libs/bus/src/tracing.ts injected', // trace headers per OpenTelemetry context
      'libs/llm/src/bpe-tables.ts builds', // BPE tables per encoding
      'libs/llm/src/token-estimate.ts counters', // token counters per encoding
      'libs/tools/src/registry.ts definitionsByList', // tool definitions per name list
    ]);
    const found = scan.files
      .filter((file) => /^(apps|libs|services)\/[^/]+\/src\//.test(file))
      .flatMap((file) =>
        moduleLevelMapsOf(file, readFileSync(join(REPO_ROOT, file), 'utf8')).map(
          (state) => `${file} ${state.name}`,
        ),
      );
    expect(found.filter((each) => !memoCaches.has(each))).toEqual([]);
    // A cache that went away leaves the list.
    expect([...memoCaches].filter((each) => !found.includes(each))).toEqual([]);
  });
});

describe('moduleLevelMapsOf', () => {
  it('finds top-level Map and WeakMap constants, not sets, locals or other classes', () => {
    const text = [
      'const feeds = new WeakMap<object, number>();',
      'export const byName = new Map();',
      "const NAMES = new Set(['a']);",
      'const when = new Date();',
      'function make() { const local = new Map(); return local; }',
    ].join('\n');
    expect(moduleLevelMapsOf('x.ts', text)).toEqual([
      { name: 'feeds', line: 1, type: 'WeakMap' },
      { name: 'byName', line: 2, type: 'Map' },
    ]);
  });
});

const pkg = (name: string, dir: string, kind: PackageKind, declared: string[] = []): WorkspacePackage => ({
  name,
  dir,
  kind,
  exports:
    kind === 'service'
      ? {}
      : {
          '.': './src/index.ts',
          ...(name.endsWith('db')
            ? {
                './testing': './src/testing.ts',
                './gateway': './src/gateway/index.ts',
                './router': './src/router/index.ts',
              }
            : {}),
        },
  declared,
});
const contracts = pkg('@quill/contracts', 'libs/contracts', 'lib');
const client = pkg('@quill/client', 'libs/client', 'lib', ['@quill/contracts']);
const db = pkg('@quill/db', 'libs/db', 'lib', ['@quill/contracts']);
const bus = pkg('@quill/bus', 'libs/bus', 'lib', ['@quill/contracts', '@quill/db']);
const gateway = pkg('@quill/gateway', 'services/gateway', 'service', [
  '@quill/bus',
  '@quill/db',
  '@quill/contracts',
]);
const router = pkg('@quill/router', 'services/router', 'service', ['@quill/bus']);
const web = pkg('@quill/web', 'apps/web', 'app', ['@quill/client', '@quill/contracts', '@quill/bus']);
const fakeLlm = pkg('@quill/fake-llm', 'test/fake-llm', 'test');
const workspace = [contracts, client, db, bus, gateway, router, web, fakeLlm];

function rulesBroken(from: WorkspacePackage, file: string, specifier: string): RuleId[] {
  const edge: ImportEdge = { file, line: 1, specifier };
  return checkImport(edge, from, workspace).map((violation) => violation.rule);
}

describe('checkImport', () => {
  it('allows a package its declared dependencies, its own files and third-party modules', () => {
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', '@quill/bus')).toEqual([]);
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', './routes/agent.ts')).toEqual([]);
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', 'fastify')).toEqual([]);
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', 'node:http')).toEqual([]);
    expect(rulesBroken(web, 'apps/web/src/app.tsx', '@quill/client')).toEqual([]);
    // Tests may use the test-only entry points and root test/support.
    expect(rulesBroken(gateway, 'services/gateway/test/app.test.ts', '@quill/db/testing')).toEqual([]);
    expect(
      rulesBroken(gateway, 'services/gateway/test/app.test.ts', '../../../test/support/urls.ts'),
    ).toEqual([]);
  });

  it('refuses a service importing another service, by name or by path', () => {
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', '@quill/router')).toContain(
      'service-imports-service',
    );
    expect(rulesBroken(gateway, 'services/gateway/test/x.test.ts', '../../router/src/run-state.ts')).toEqual([
      'service-imports-service',
      'internal-file',
    ]);
  });

  it('refuses a lib importing a service', () => {
    expect(rulesBroken(bus, 'libs/bus/src/publish.ts', '../../../services/router/src/main.ts')).toContain(
      'lib-imports-service',
    );
  });

  it('lets the web app import only the contracts and the client', () => {
    expect(rulesBroken(web, 'apps/web/src/app.tsx', '@quill/bus')).toEqual(['app-imports-beyond-client']);
  });

  it('refuses test-only entry points in shipped code', () => {
    expect(rulesBroken(bus, 'libs/bus/src/publish.ts', '@quill/db/testing')).toEqual([
      'testing-entry-from-src',
    ]);
    expect(rulesBroken(db, 'libs/db/src/index.ts', './testing.ts')).toEqual(['testing-entry-from-src']);
    expect(rulesBroken(db, 'libs/db/src/testing.ts', './pool.ts')).toEqual([]);
    expect(rulesBroken(bus, 'libs/bus/src/publish.ts', '@quill/fake-llm')).toEqual([
      'testing-entry-from-src',
      'undeclared-dependency',
    ]);
  });

  it('refuses another package internal files (only its exports)', () => {
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', '@quill/bus/src/publish.ts')).toEqual([
      'internal-file',
    ]);
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', '../../../libs/bus/src/index.ts')).toEqual([
      'internal-file',
    ]);
  });

  it('refuses shipped code reaching outside its package, and undeclared packages', () => {
    expect(rulesBroken(bus, 'libs/bus/src/publish.ts', '../../../test/support/urls.ts')).toEqual([
      'src-leaves-package',
    ]);
    expect(rulesBroken(router, 'services/router/src/main.ts', '@quill/db')).toEqual([
      'undeclared-dependency',
    ]);
  });

  it('lets a service write only through its own owner entry of libs/db, and tests through any', () => {
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', '@quill/db/gateway')).toEqual([]);
    expect(rulesBroken(router, 'services/router/src/main.ts', '@quill/db/router')).toEqual([
      'undeclared-dependency',
    ]);
    expect(rulesBroken(gateway, 'services/gateway/src/app.ts', '@quill/db/router')).toEqual([
      'foreign-db-writes',
    ]);
    expect(rulesBroken(bus, 'libs/bus/src/publish.ts', '@quill/db/gateway')).toEqual(['foreign-db-writes']);
    expect(rulesBroken(gateway, 'services/gateway/test/app.test.ts', '@quill/db/router')).toEqual([]);
  });

  it("lets an owner's libs/db entry re-export only the shared-tables modules its owner is a writer of", () => {
    const entry = (owner: string, module: string) =>
      rulesBroken(db, `libs/db/src/${owner}/index.ts`, `../shared-tables/${module}`);
    expect(entry('workers', 'files.ts')).toEqual([]);
    expect(entry('gateway', 'files.ts')).toEqual([]);
    expect(entry('router', 'messages.ts')).toEqual([]);
    // The context service and the router no longer write the AI's files or the artifacts.
    expect(entry('context', 'files.ts')).toEqual(['foreign-db-writes']);
    expect(entry('router', 'files.ts')).toEqual(['foreign-db-writes']);
    expect(entry('router', 'artifacts.ts')).toEqual(['foreign-db-writes']);
    expect(entry('workers', 'new-table.ts')).toEqual(['foreign-db-writes']);
    // A module of an owner may use a shared module's constants (the names are the table-owners test's).
    expect(rulesBroken(db, 'libs/db/src/router/phase-writes.ts', '../shared-tables/artifacts.ts')).toEqual(
      [],
    );
  });

  it('keeps libs/contracts a leaf: zod and node built-ins only', () => {
    expect(rulesBroken(contracts, 'libs/contracts/src/frames.ts', 'zod')).toEqual([]);
    expect(rulesBroken(contracts, 'libs/contracts/src/frames.ts', 'node:crypto')).toEqual([]);
    expect(rulesBroken(contracts, 'libs/contracts/src/frames.ts', 'pg')).toEqual(['contracts-not-a-leaf']);
  });
});

describe('cycleViolations', () => {
  it('reports each package cycle once and nothing for a layered graph', () => {
    const layered = new Map([
      ['@quill/gateway', new Set(['@quill/bus', '@quill/db'])],
      ['@quill/bus', new Set(['@quill/db'])],
      ['@quill/db', new Set<string>()],
    ]);
    expect(cycleViolations(layered)).toEqual([]);
    const cyclic = new Map([
      ['@quill/bus', new Set(['@quill/db'])],
      ['@quill/db', new Set(['@quill/telemetry'])],
      ['@quill/telemetry', new Set(['@quill/bus'])],
      ['@quill/gateway', new Set(['@quill/bus'])],
    ]);
    expect(cycleViolations(cyclic)).toMatchObject([
      { rule: 'package-cycle', at: '@quill/bus ↔ @quill/db ↔ @quill/telemetry' },
    ]);
  });
});

describe('importsOf', () => {
  it('finds static, type-only, re-export, dynamic and import-type imports, and not strings or comments', () => {
    const text = [
      "import { a } from '@quill/bus';",
      "import type { B } from './b.ts';",
      "export { c } from '@quill/db';",
      "const d = await import('@quill/llm');",
      "type E = typeof import('@quill/redis');",
      "// import { f } from '@quill/router';",
      'const text = "import { g } from \'@quill/writer\'";',
    ].join('\n');
    expect(importsOf('x.ts', text)).toEqual([
      { specifier: '@quill/bus', line: 1 },
      { specifier: './b.ts', line: 2 },
      { specifier: '@quill/db', line: 3 },
      { specifier: '@quill/llm', line: 4 },
      { specifier: '@quill/redis', line: 5 },
    ]);
  });
});

describe('scanWorkspace on a workspace that breaks the rules', () => {
  it('reports each broken import with its file and line, and the package cycle', () => {
    const root = mkdtempSync(join(tmpdir(), 'quill-boundaries-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      const manifest = (
        name: string,
        dependencies: string[] = [],
        exports: unknown = { '.': './src/index.ts' },
      ) =>
        JSON.stringify({
          name,
          exports,
          dependencies: Object.fromEntries(dependencies.map((each) => [each, '*'])),
        });
      write('package.json', JSON.stringify({ workspaces: ['libs/*', 'services/*'] }));
      write('libs/a/package.json', manifest('@quill/a', ['@quill/b']));
      write('libs/a/src/index.ts', "export { b } from '@quill/b';\n");
      write('libs/b/package.json', manifest('@quill/b', ['@quill/a']));
      write('libs/b/src/index.ts', "import { b as a } from '@quill/a';\nexport const b = a;\n");
      write('services/one/package.json', manifest('@quill/one', ['@quill/a'], {}));
      write('services/one/src/main.ts', "import '@quill/a';\nimport { x } from '../../two/src/x.ts';\n");
      write('services/two/package.json', manifest('@quill/two', [], {}));
      write('services/two/src/x.ts', 'export const x = 1;\n');
      const found = scanWorkspace(root).violations.map((each) => `${each.rule} ${each.at}`);
      expect(found.sort()).toEqual([
        'internal-file services/one/src/main.ts:2',
        'package-cycle @quill/a ↔ @quill/b',
        'service-imports-service services/one/src/main.ts:2',
        'undeclared-dependency services/one/src/main.ts:2',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
