import { existsSync, globSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What a workspace package is for; the import rules (docs/architecture.md "Boundaries") use it. */
export type PackageKind = 'app' | 'lib' | 'service' | 'test';

export interface WorkspacePackage {
  /** `@quill/bus` */
  name: string;
  /** Relative to the repository root, `/`-separated: `libs/bus`. */
  dir: string;
  kind: PackageKind;
  /** The `exports` field as written (string, subpath map, conditions, or undefined). */
  exports: unknown;
  /** Workspace packages named in dependencies, devDependencies or peerDependencies. */
  declared: string[];
}

export const REPO_ROOT = join(import.meta.dirname, '..', '..');

const KIND_BY_FOLDER: Record<string, PackageKind> = {
  apps: 'app',
  libs: 'lib',
  services: 'service',
  test: 'test',
};

/** The packages the root package.json's `workspaces` name (`libs/*`, `test/fake-llm`, …). */
export function readWorkspace(root = REPO_ROOT): WorkspacePackage[] {
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  const dirs = rootManifest.workspaces
    .flatMap((pattern) => globSync(pattern, { cwd: root }))
    .map((dir) => dir.split('\\').join('/'))
    .filter((dir) => existsSync(join(root, dir, 'package.json')))
    .sort();
  const manifests = dirs.map((dir) => ({
    dir,
    manifest: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest,
  }));
  const names = new Set(manifests.map(({ manifest }) => manifest.name));
  return manifests.map(({ dir, manifest }) => {
    const kind = KIND_BY_FOLDER[dir.split('/')[0] ?? ''];
    if (!kind) throw new Error(`${dir}: a workspace package outside apps/, libs/, services/ or test/`);
    const declared = Object.keys({
      ...manifest.dependencies,
      ...manifest.devDependencies,
      ...manifest.peerDependencies,
    }).filter((name) => names.has(name));
    return { name: manifest.name, dir, kind, exports: manifest.exports, declared };
  });
}

interface Manifest {
  name: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * The subpaths a package exports with their target files: `{ '.': ['./src/index.ts'] }`. A
 * string `exports` is the `.` subpath; nested condition objects (`import`, `types`, …) each add
 * a target; `null` (a subpath closed on purpose) adds none.
 */
export function exportedSubpaths(exportsField: unknown): Map<string, string[]> {
  const subpaths = new Map<string, string[]>();
  if (exportsField === undefined || exportsField === null) return subpaths;
  if (typeof exportsField === 'string' || Array.isArray(exportsField)) {
    subpaths.set('.', targetsOf(exportsField));
    return subpaths;
  }
  const entries = Object.entries(exportsField as Record<string, unknown>);
  // `{ "import": "./x.ts" }` is conditions of `.`, `{ ".": …, "./testing": … }` a subpath map.
  if (entries.length > 0 && entries.every(([key]) => !key.startsWith('.'))) {
    subpaths.set('.', targetsOf(exportsField));
    return subpaths;
  }
  for (const [subpath, target] of entries) subpaths.set(subpath, targetsOf(target));
  return subpaths;
}

function targetsOf(target: unknown): string[] {
  if (typeof target === 'string') return [target];
  if (target === null || target === undefined) return [];
  if (Array.isArray(target)) return target.flatMap(targetsOf);
  return Object.values(target as Record<string, unknown>).flatMap(targetsOf);
}

export interface MissingExport {
  pkg: string;
  subpath: string;
  target: string;
  reason: string;
}

/** Every export target of a package that is not a file inside it (or, for a `*` pattern, matches none). */
export function missingExportTargets(pkg: WorkspacePackage, root = REPO_ROOT): MissingExport[] {
  const missing: MissingExport[] = [];
  for (const [subpath, targets] of exportedSubpaths(pkg.exports)) {
    for (const target of targets) {
      const reason = targetProblem(join(root, pkg.dir), target);
      if (reason) missing.push({ pkg: pkg.name, subpath, target, reason });
    }
  }
  return missing;
}

function targetProblem(packageDir: string, target: string): string | undefined {
  if (!target.startsWith('./')) return 'a target must start with ./ (Node refuses anything else)';
  const path = join(packageDir, target);
  if (relative(packageDir, path).startsWith('..')) return 'points outside the package';
  if (target.includes('*')) {
    const [before = '', after = ''] = target.split('*');
    const dir = join(packageDir, before.slice(0, before.lastIndexOf('/') + 1));
    const prefix = before.slice(before.lastIndexOf('/') + 1);
    const matches =
      existsSync(dir) &&
      readdirSync(dir).some((entry) => entry.startsWith(prefix) && entry.endsWith(after.replace(/^\//, '')));
    return matches ? undefined : 'the pattern matches no file';
  }
  if (!existsSync(path)) return 'no such file';
  if (!statSync(path).isFile()) return 'not a file';
  return undefined;
}
