import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportedSubpaths, missingExportTargets, readWorkspace, type WorkspacePackage } from './workspace.ts';

const workspace = readWorkspace();

describe('package exports', () => {
  it('finds every workspace package', () => {
    const dirs = workspace.map((pkg) => pkg.dir);
    expect(dirs).toContain('libs/bus');
    expect(dirs).toContain('services/gateway');
    expect(dirs).toContain('apps/web');
    expect(dirs).toContain('test/fake-llm');
  });

  it('point only at files that exist', () => {
    expect(workspace.flatMap((pkg) => missingExportTargets(pkg))).toEqual([]);
  });

  it('every lib has a main entry, and services export nothing (nothing may import a service)', () => {
    for (const pkg of workspace.filter((each) => each.kind === 'lib')) {
      expect(exportedSubpaths(pkg.exports).get('.'), pkg.name).toEqual(['./src/index.ts']);
    }
    for (const pkg of workspace.filter((each) => each.kind === 'service')) {
      expect(pkg.exports, pkg.name).toEqual({});
    }
  });
});

describe('missingExportTargets', () => {
  const root = mkdtempSync(join(tmpdir(), 'quill-exports-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'libs/demo/src'), { recursive: true });
  writeFileSync(join(root, 'libs/demo/src/index.ts'), 'export const x = 1;\n');
  const demo = (exports: unknown): WorkspacePackage => ({
    name: '@quill/demo',
    dir: 'libs/demo',
    kind: 'lib',
    exports,
    declared: [],
  });

  it('reports a subpath whose file is missing and passes one that exists', () => {
    const missing = missingExportTargets(
      demo({ '.': './src/index.ts', './testing': './src/testing.ts' }),
      root,
    );
    expect(missing).toEqual([
      { pkg: '@quill/demo', subpath: './testing', target: './src/testing.ts', reason: 'no such file' },
    ]);
  });

  it('reads string, condition and null exports', () => {
    expect(missingExportTargets(demo('./src/main.ts'), root).map((each) => each.target)).toEqual([
      './src/main.ts',
    ]);
    expect(
      missingExportTargets(demo({ '.': { types: './src/index.ts', import: './dist/index.js' } }), root),
    ).toMatchObject([{ subpath: '.', target: './dist/index.js' }]);
    expect(missingExportTargets(demo({ '.': './src/index.ts', './internal/*': null }), root)).toEqual([]);
  });

  it('refuses a target outside the package or without ./', () => {
    expect(missingExportTargets(demo({ '.': '../other/src/index.ts' }), root)[0]?.reason).toMatch(/\.\//);
    expect(missingExportTargets(demo({ '.': './../sibling/src/index.ts' }), root)[0]?.reason).toBe(
      'points outside the package',
    );
  });
});
