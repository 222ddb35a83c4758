import { existsSync, globSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/**
 * Which names a lib's `src/index.ts` exports that no file outside the lib imports. Syntactic
 * (the TypeScript parser, no type checker): `export *` is followed into the files it names, and a
 * namespace import (`import * as x from '@quill/lib'`) counts as using every export.
 */

export interface LibExports {
  /** `@quill/bus` */
  name: string;
  /** Repository-relative: `libs/bus`. */
  dir: string;
  /** The entry file, repository-relative: `libs/bus/src/index.ts`. */
  entry: string;
  exported: string[];
  /** Exported names imported by some file outside the lib, with whether a shipped file does. */
  usedBy: Map<string, { src: boolean; other: boolean }>;
  /** Exported names no file outside the lib imports. */
  unused: string[];
  /** Exported names only tests and scripts outside the lib import (no shipped `src/` file). */
  testOnly: string[];
}

function parse(path: string): ts.SourceFile {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true, kind);
}

const hasExportModifier = (node: ts.Node) =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The names a module exports, following `export * from './x.ts'` (cycles are visited once). */
export function exportedNames(path: string, seen = new Set<string>()): string[] {
  if (seen.has(path) || !existsSync(path)) return [];
  seen.add(path);
  const names: string[] = [];
  for (const statement of parse(path).statements) {
    if (ts.isExportDeclaration(statement)) {
      const from = statement.moduleSpecifier;
      if (!statement.exportClause) {
        if (from && ts.isStringLiteral(from) && from.text.startsWith('.')) {
          names.push(...exportedNames(join(dirname(path), from.text), seen));
        }
      } else if (ts.isNamedExports(statement.exportClause)) {
        names.push(...statement.exportClause.elements.map((element) => element.name.text));
      } else {
        names.push(statement.exportClause.name.text);
      }
    } else if (hasExportModifier(statement)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
        }
      } else if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isInterfaceDeclaration(statement) ||
          ts.isTypeAliasDeclaration(statement) ||
          ts.isEnumDeclaration(statement)) &&
        statement.name
      ) {
        names.push(statement.name.text);
      }
    }
  }
  return [...new Set(names)];
}

/**
 * What one file imports from workspace-style packages, by specifier: `{ '@quill/bus': ['ack'] }`
 * (`'*'` for a namespace import or `export *`). Relative imports are left out.
 */
export function importedNamesByModule(path: string): Map<string, string[]> {
  const byModule = new Map<string, string[]>();
  const add = (module: string, names: string[]) =>
    byModule.set(module, [...(byModule.get(module) ?? []), ...names]);
  const source = parse(path);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const from = statement.moduleSpecifier;
    if (!from || !ts.isStringLiteral(from) || from.text.startsWith('.')) continue;
    if (ts.isImportDeclaration(statement)) {
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) add(from.text, ['*']);
      else if (bindings)
        add(
          from.text,
          bindings.elements.map((each) => (each.propertyName ?? each.name).text),
        );
      else add(from.text, []);
    } else if (statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      add(
        from.text,
        statement.exportClause.elements.map((each) => (each.propertyName ?? each.name).text),
      );
    } else {
      add(from.text, ['*']);
    }
  }
  // `await import('@quill/x')` and `typeof import('@quill/x')` may use any export.
  const visit = (node: ts.Node) => {
    const dynamic =
      ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
        ? node.arguments[0]
        : ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
          ? node.argument.literal
          : undefined;
    if (dynamic && ts.isStringLiteral(dynamic) && !dynamic.text.startsWith('.')) {
      // `const { a, b } = await import('@quill/x')` uses just a and b.
      const bound = ts.isAwaitExpression(node.parent) ? node.parent.parent : undefined;
      const pattern = bound && ts.isVariableDeclaration(bound) ? bound.name : undefined;
      if (pattern && ts.isObjectBindingPattern(pattern)) {
        add(
          dynamic.text,
          pattern.elements.map((each) => (each.propertyName ?? each.name).getText()),
        );
      } else add(dynamic.text, ['*']);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return byModule;
}

// Where code that may import a lib lives (not node_modules, .node or build output).
const SOURCE_FILES = '{apps,libs,services,test,scripts}/**/*.{ts,tsx,mts,cts}';
const NOT_SOURCE = ['**/node_modules/**', '**/dist/**'];

/** Every lib under `libs/` with its index's exports and who outside the lib uses them. */
export function unusedLibExports(root: string): LibExports[] {
  const files = globSync(SOURCE_FILES, { cwd: root, exclude: NOT_SOURCE }).map((file) =>
    file.split('\\').join('/'),
  );
  const imports = new Map(files.map((file) => [file, importedNamesByModule(join(root, file))]));
  const libs = globSync('libs/*/package.json', { cwd: root })
    .map((file) => file.split('\\').join('/'))
    .sort();
  return libs.flatMap((manifestPath) => {
    const dir = dirname(manifestPath);
    const manifest = JSON.parse(readFileSync(join(root, manifestPath), 'utf8')) as {
      name: string;
      exports?: unknown;
    };
    return libEntries(manifest.exports).map(([subpath, entryFile]) => {
      const name = subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`;
      return entryReport(root, files, imports, { name, dir, entry: join(dir, entryFile) });
    });
  });
}

/**
 * The entries of a lib that are public surfaces: `.` (`src/index.ts`) and every subpath whose
 * target is another `index.ts` (libs/db's owner entries, `@quill/db/gateway`); the `./testing`
 * doubles and single-file entries (a preload, a seed) are left out.
 */
function libEntries(exports: unknown): Array<[string, string]> {
  if (!exports || typeof exports !== 'object') return [['.', 'src/index.ts']];
  const entries = Object.entries(exports as Record<string, unknown>).filter(
    (entry): entry is [string, string] =>
      typeof entry[1] === 'string' && (entry[0] === '.' || entry[1].endsWith('/index.ts')),
  );
  return entries.length > 0 ? entries : [['.', 'src/index.ts']];
}

function entryReport(
  root: string,
  files: string[],
  imports: Map<string, Map<string, string[]>>,
  { name, dir, entry }: { name: string; dir: string; entry: string },
): LibExports {
  const exported = exportedNames(join(root, entry));
  const usedBy = new Map<string, { src: boolean; other: boolean }>();
  for (const file of files) {
    if (file.startsWith(`${dir}/`)) continue;
    const shipped = /^(apps|libs|services)\/[^/]+\/src\//.test(file);
    const imported = imports.get(file)?.get(name) ?? [];
    for (const each of imported.includes('*') ? exported : imported) {
      const use = usedBy.get(each) ?? { src: false, other: false };
      if (shipped) use.src = true;
      else use.other = true;
      usedBy.set(each, use);
    }
  }
  return {
    name,
    dir,
    entry,
    exported,
    usedBy,
    unused: exported.filter((each) => !usedBy.has(each)).sort(),
    testOnly: exported.filter((each) => usedBy.get(each)?.src === false).sort(),
  };
}

/**
 * The rule test/arch/unused-exports.test.ts enforces (see docs/architecture.md "Boundaries"): a
 * lib's index exports only what some file outside the lib imports, unless the allow-list names
 * it. An allow-list entry that is no longer exported, or is now imported, is reported as stale
 * so the list cannot outlive its reason.
 */
export function publicSurfaceViolations(
  libs: LibExports[],
  allowed: Record<string, readonly string[]>,
): string[] {
  const problems: string[] = [];
  for (const lib of libs) {
    const allow = new Set(allowed[lib.name] ?? []);
    for (const name of lib.unused) {
      if (!allow.has(name))
        problems.push(`${lib.name} exports ${name}, which nothing outside the lib imports`);
    }
    for (const name of allow) {
      if (!lib.exported.includes(name))
        problems.push(`${lib.name}: allow-listed ${name} is no longer exported`);
      else if (!lib.unused.includes(name))
        problems.push(`${lib.name}: allow-listed ${name} is imported now; drop it from the list`);
    }
  }
  return problems;
}
