import { builtinModules } from 'node:module';
import { dirname, posix } from 'node:path';
import { exportedSubpaths, type WorkspacePackage } from './workspace.ts';

/**
 * The import boundaries of docs/architecture.md "Boundaries", as pure functions over
 * repository-relative paths, so a rule can be shown to fail on a made-up import.
 */

export type RuleId =
  | 'service-imports-service'
  | 'lib-imports-service'
  | 'app-imports-beyond-client'
  | 'testing-entry-from-src'
  | 'internal-file'
  | 'src-leaves-package'
  | 'contracts-not-a-leaf'
  | 'undeclared-dependency'
  | 'foreign-db-writes'
  | 'package-cycle';

export interface Violation {
  rule: RuleId;
  /** `libs/bus/src/publish.ts:3` */
  at: string;
  message: string;
}

export interface ImportEdge {
  /** The importing file, repository-relative, `/`-separated. */
  file: string;
  line: number;
  specifier: string;
}

/** Where an import lands. */
export type ImportTarget =
  | { kind: 'external'; name: string }
  | { kind: 'own'; path: string }
  | { kind: 'package'; pkg: WorkspacePackage; subpath: string; viaRelativePath: boolean }
  | { kind: 'outside'; path: string };

/** The workspace package a repository-relative file belongs to (the deepest package dir holding it). */
export function packageOf(
  file: string,
  workspace: readonly WorkspacePackage[],
): WorkspacePackage | undefined {
  return workspace
    .filter((pkg) => file === pkg.dir || file.startsWith(`${pkg.dir}/`))
    .sort((a, b) => b.dir.length - a.dir.length)[0];
}

/** True for files under the package's `src/`: what ships, as opposed to its tests and tooling. */
export function isSourceFile(file: string, pkg: WorkspacePackage): boolean {
  return file.startsWith(`${pkg.dir}/src/`);
}

export function resolveTarget(
  edge: ImportEdge,
  from: WorkspacePackage,
  workspace: readonly WorkspacePackage[],
): ImportTarget {
  const { specifier } = edge;
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    const path = posix.normalize(posix.join(dirname(edge.file).split('\\').join('/'), specifier));
    const pkg = packageOf(path, workspace);
    if (pkg === from) return { kind: 'own', path };
    if (!pkg) return { kind: 'outside', path };
    return { kind: 'package', pkg, subpath: `./${posix.relative(pkg.dir, path)}`, viaRelativePath: true };
  }
  if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] ?? '')) {
    return { kind: 'external', name: specifier };
  }
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  const pkg = workspace.find((each) => each.name === name);
  if (!pkg) return { kind: 'external', name };
  const rest = specifier.slice(name.length);
  return { kind: 'package', pkg, subpath: rest ? `.${rest}` : '.', viaRelativePath: false };
}

/** Whether `subpath` is one of the package's `exports` keys (a `*` pattern matches any middle). */
export function isExported(pkg: WorkspacePackage, subpath: string): boolean {
  for (const [key, targets] of exportedSubpaths(pkg.exports)) {
    if (targets.length === 0) continue;
    if (key === subpath) return true;
    const star = key.indexOf('*');
    if (star >= 0 && subpath.startsWith(key.slice(0, star)) && subpath.endsWith(key.slice(star + 1))) {
      return true;
    }
  }
  return false;
}

/** The apps talk to the product through its HTTP contract only. */
const APP_MAY_IMPORT = new Set(['@quill/contracts', '@quill/client']);
/** libs/contracts is the leaf every package shares: schemas only, no driver, no other package. */
const CONTRACTS_MAY_IMPORT = new Set(['zod']);

/**
 * The owners of docs/architecture.md "What each service owns", by the package whose code writes for
 * them: writer and reviewer are one worker runtime, built from libs/agent-runtime and libs/tools.
 */
const DB_OWNER_OF_PACKAGE: Record<string, string> = {
  '@quill/gateway': 'gateway',
  '@quill/router': 'router',
  '@quill/writer': 'workers',
  '@quill/reviewer': 'workers',
  '@quill/agent-runtime': 'workers',
  '@quill/tools': 'workers',
  '@quill/context': 'context',
  '@quill/billing': 'billing',
};
/**
 * The owners whose entry may re-export the writers of each `libs/db/src/shared-tables/` module:
 * the two writers of each of the tables docs/decisions/0022-two-writer-tables-and-their-guards.md
 * keeps shared (`definitions.ts` holds one-owner tables of both). A third writer, or a new module
 * there, fails until that record (and this list) say why.
 */
export const SHARED_TABLE_WRITERS: Readonly<Record<string, readonly string[]>> = {
  'artifacts.ts': ['gateway', 'workers'],
  'definitions.ts': ['gateway', 'workers'],
  'file-edits.ts': ['gateway', 'workers'],
  'files.ts': ['gateway', 'workers'],
  'project-workspace.ts': ['gateway', 'workers'],
  'state-commits.ts': ['gateway', 'workers'],
  'messages.ts': ['gateway', 'router'],
  'routing.ts': ['router'],
};

/** libs/db's write entries (`@quill/db/<owner>`); `@quill/db` itself is pool, migrations and reads. */
export const DB_WRITE_ENTRIES = new Set(['gateway', 'router', 'workers', 'context', 'billing', 'seed']);

/** The violations of one import of a workspace package's file (none for an allowed import). */
export function checkImport(
  edge: ImportEdge,
  from: WorkspacePackage,
  workspace: readonly WorkspacePackage[],
): Violation[] {
  const target = resolveTarget(edge, from, workspace);
  const at = `${edge.file}:${edge.line}`;
  const inSrc = isSourceFile(edge.file, from);
  const found: Violation[] = [];
  const flag = (rule: RuleId, message: string) => found.push({ rule, at, message });

  if (target.kind === 'own') {
    // A package's own test doubles stay out of what it ships, like everyone else's.
    const isTesting = (path: string) => /(^|\/)testing\.ts$/.test(path);
    if (inSrc && isTesting(target.path) && !isTesting(edge.file)) {
      flag('testing-entry-from-src', `shipped code imports its own test-only ${target.path}`);
    }
    const entryOwner = /^libs\/db\/src\/([a-z]+)\/index\.ts$/.exec(edge.file)?.[1];
    const sharedModule = /^libs\/db\/src\/shared-tables\/([a-z-]+\.ts)$/.exec(target.path)?.[1];
    if (entryOwner && sharedModule && !SHARED_TABLE_WRITERS[sharedModule]?.includes(entryOwner)) {
      // A new writer of a two-writer table (docs/decisions/0022) is a design change, not an import.
      flag(
        'foreign-db-writes',
        `@quill/db/${entryOwner} re-exports shared-tables/${sharedModule}, whose tables only ${(SHARED_TABLE_WRITERS[sharedModule] ?? ['(nobody listed)']).join(' and ')} write`,
      );
    }
    return found;
  }
  if (target.kind === 'external') {
    if (from.name === '@quill/contracts' && inSrc && !target.name.startsWith('node:')) {
      if (!CONTRACTS_MAY_IMPORT.has(target.name)) flag('contracts-not-a-leaf', `imports ${target.name}`);
    }
    return found;
  }
  if (target.kind === 'outside') {
    if (inSrc) flag('src-leaves-package', `reaches ${target.path}, outside any package`);
    return found;
  }
  const { pkg } = target;
  if (from.kind === 'service' && pkg.kind === 'service') {
    flag('service-imports-service', `${from.name} imports the service ${pkg.name}`);
  }
  if (from.kind === 'lib' && pkg.kind === 'service') {
    flag('lib-imports-service', `${from.name} imports the service ${pkg.name}`);
  }
  if (from.kind === 'app' && !APP_MAY_IMPORT.has(pkg.name)) {
    flag(
      'app-imports-beyond-client',
      `${from.name} imports ${pkg.name}; apps use only @quill/contracts and @quill/client`,
    );
  }
  if (from.name === '@quill/contracts' && inSrc) flag('contracts-not-a-leaf', `imports ${pkg.name}`);
  if (inSrc && (pkg.kind === 'test' || /(^|\/)testing(\.ts)?$/.test(target.subpath))) {
    flag(
      'testing-entry-from-src',
      `shipped code imports the test-only ${pkg.name}${target.subpath.slice(1)}`,
    );
  }
  if (inSrc && pkg !== from && !from.declared.includes(pkg.name)) {
    flag('undeclared-dependency', `${pkg.name} is not in ${from.dir}/package.json's dependencies`);
  }
  const dbEntry = pkg.name === '@quill/db' ? target.subpath.slice(2) : '';
  if (inSrc && DB_WRITE_ENTRIES.has(dbEntry) && DB_OWNER_OF_PACKAGE[from.name] !== dbEntry) {
    // One owner per table (docs/decisions/0010, 0021): a package writes only through its owner's entry.
    flag(
      'foreign-db-writes',
      `${from.name} imports @quill/db/${dbEntry}, the write functions of ${dbEntry === 'seed' ? 'the demo seed' : `the ${dbEntry}`}; it may write only through ${DB_OWNER_OF_PACKAGE[from.name] ? `@quill/db/${DB_OWNER_OF_PACKAGE[from.name]}` : 'no @quill/db write entry'}`,
    );
  }
  if (target.viaRelativePath) {
    flag('internal-file', `reaches into ${pkg.name} by path (${edge.specifier}); import its exports`);
  } else if (!isExported(pkg, target.subpath)) {
    flag('internal-file', `${edge.specifier} is not in ${pkg.name}'s exports`);
  }
  return found;
}

/**
 * Package-level cycles (strongly connected components of more than one package) in the graph of
 * `from → to` edges, each reported once with the packages in it.
 */
export function packageCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) connect(node);
  return components;
}

export function cycleViolations(edges: ReadonlyMap<string, ReadonlySet<string>>): Violation[] {
  return packageCycles(edges).map((cycle) => ({
    rule: 'package-cycle',
    at: cycle.join(' ↔ '),
    message: `these packages import each other (through their src): ${cycle.join(', ')}`,
  }));
}
