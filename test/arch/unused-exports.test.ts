import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { publicSurfaceViolations, unusedLibExports } from '../../scripts/lib-unused-exports.ts';
import { ALLOWED_UNUSED_EXPORTS } from './allowed-unused-exports.ts';

// scripts/unused-exports.ts lists what a lib exports and nobody outside it imports.
describe('unusedLibExports', () => {
  const root = mkdtempSync(join(tmpdir(), 'quill-unused-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('libs/a/package.json', JSON.stringify({ name: '@quill/a' }));
  write(
    'libs/a/src/index.ts',
    [
      "export { used, type Shape } from './one.ts';",
      "export * from './many.ts';",
      'export const local = 1;',
      'export interface Unread { x: number }',
    ].join('\n'),
  );
  write(
    'libs/a/src/one.ts',
    'export const used = 1;\nexport type Shape = { a: 1 };\nexport const hidden = 2;\n',
  );
  write('libs/a/src/many.ts', 'export function fromStar() {}\nexport class TestedOnly {}\n');
  // The lib's own test does not count: it is inside the lib.
  write('libs/a/test/a.test.ts', "import { local, Unread } from '@quill/a';\n");
  write(
    'services/s/src/main.ts',
    "import { used, type Shape } from '@quill/a';\nexport { fromStar } from '@quill/a';\n",
  );
  write('test/e2e/x.test.ts', "import { TestedOnly, used } from '@quill/a';\n");

  it('follows export * and reports names no file outside the lib imports, and those only tests use', () => {
    const [lib] = unusedLibExports(root);
    expect(lib?.name).toBe('@quill/a');
    expect(lib?.exported.sort()).toEqual(['Shape', 'TestedOnly', 'Unread', 'fromStar', 'local', 'used']);
    expect(lib?.unused).toEqual(['Unread', 'local']);
    expect(lib?.testOnly).toEqual(['TestedOnly']);
  });

  it('counts a namespace import as using every export', () => {
    write('apps/w/src/app.ts', "import * as a from '@quill/a';\nexport const b = a;\n");
    expect(unusedLibExports(root)[0]?.unused).toEqual([]);
  });

  it('the rule fails on an export nothing outside the lib imports, and on a stale allow-list entry', () => {
    // Runs after the namespace import above was written, so take it away again.
    rmSync(join(root, 'apps/w/src/app.ts'));
    const libs = unusedLibExports(root);
    expect(publicSurfaceViolations(libs, {})).toEqual([
      '@quill/a exports Unread, which nothing outside the lib imports',
      '@quill/a exports local, which nothing outside the lib imports',
    ]);
    expect(publicSurfaceViolations(libs, { '@quill/a': ['Unread', 'local'] })).toEqual([]);
    expect(publicSurfaceViolations(libs, { '@quill/a': ['Unread', 'local', 'used', 'gone'] })).toEqual([
      '@quill/a: allow-listed used is imported now; drop it from the list',
      '@quill/a: allow-listed gone is no longer exported',
    ]);
  });

  it('sees names taken from a dynamic import, and a bare dynamic import as using everything', () => {
    write('test/load/d.ts', "const { local } = await import('@quill/a');\nexport { local };\n");
    expect(unusedLibExports(root)[0]?.unused).toEqual(['Unread']);
    write('test/load/e.ts', "export type A = typeof import('@quill/a');\n");
    expect(unusedLibExports(root)[0]?.unused).toEqual([]);
  });
});

describe('unusedLibExports on subpath entries', () => {
  const root = mkdtempSync(join(tmpdir(), 'quill-unused-entries-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it('reports each index entry of the exports map on its own, leaving out testing and single files', () => {
    write(
      'libs/d/package.json',
      JSON.stringify({
        name: '@quill/d',
        exports: {
          '.': './src/index.ts',
          './w': './src/w/index.ts',
          './seed': './src/seed.ts',
          './testing': './src/testing.ts',
        },
      }),
    );
    write('libs/d/src/index.ts', 'export const read = 1;\n');
    write('libs/d/src/w/index.ts', 'export const write = 1;\nexport const idle = 2;\n');
    write('libs/d/src/seed.ts', 'export const seed = 1;\n');
    write(
      'services/s/src/main.ts',
      "import { read } from '@quill/d';\nimport { write } from '@quill/d/w';\n",
    );
    const libs = unusedLibExports(root);
    expect(libs.map((lib) => [lib.name, lib.entry, lib.unused])).toEqual([
      ['@quill/d', 'libs/d/src/index.ts', []],
      ['@quill/d/w', 'libs/d/src/w/index.ts', ['idle']],
    ]);
  });
});

// The repository itself: every lib index exports only what something outside the lib imports.
describe('lib public surfaces', () => {
  it('export nothing that no file outside the lib imports, beyond the commented allow-list', () => {
    const root = join(import.meta.dirname, '../..');
    expect(publicSurfaceViolations(unusedLibExports(root), ALLOWED_UNUSED_EXPORTS)).toEqual([]);
  });
});
