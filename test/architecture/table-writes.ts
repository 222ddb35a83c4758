import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * Which PostgreSQL tables each service's code writes, found by reading the code: every SQL
 * statement in a string or template literal (`INSERT INTO t`, `UPDATE t`, `DELETE FROM t`),
 * attributed to the function it sits in; libs/db functions are followed through the calls they
 * make to each other; a service is its own src/ plus every workspace lib it imports (transitively).
 * The ownership test (table-owners.test.ts) compares the result with docs/architecture.md.
 */

const WRITE = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)/gi;

export interface WriteSite {
  table: string;
  /** Where the statement is, `file#function`, or the libs/db function it came through. */
  via: string;
}

/** Tables named by `CREATE TABLE` in the migrations: the only words a write can name. */
export function tablesOf(migrationsDir: string): Set<string> {
  const tables = new Set<string>();
  for (const name of readdirSync(migrationsDir).filter((file) => file.endsWith('.sql'))) {
    const sql = readFileSync(join(migrationsDir, name), 'utf8');
    for (const match of sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/gi))
      tables.add(match[1]!);
  }
  return tables;
}

/** The tables SQL text writes (words that are not tables, e.g. `DO UPDATE SET`, are ignored). */
export function sqlWrites(text: string, tables: ReadonlySet<string>): string[] {
  return [...text.matchAll(WRITE)].map((match) => match[1]!.toLowerCase()).filter((name) => tables.has(name));
}

interface FunctionFacts {
  writes: Set<string>;
  /** Names it calls (plain identifiers), resolved later within libs/db. */
  calls: Set<string>;
  /** Every identifier it mentions: what else of the file (or its imports) it can reach. */
  refs: Set<string>;
}

function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ');
  return undefined;
}

/** Per top-level function (declarations and `const f = (...) =>`) of one source file. */
export function scanFile(
  path: string,
  source: string,
  tables: ReadonlySet<string>,
): Map<string, FunctionFacts> {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const facts = new Map<string, FunctionFacts>();
  const visit = (node: ts.Node, into: FunctionFacts) => {
    const text = literalText(node);
    if (text !== undefined) for (const table of sqlWrites(text, tables)) into.writes.add(table);
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) into.calls.add(node.expression.text);
    if (ts.isIdentifier(node)) into.refs.add(node.text);
    ts.forEachChild(node, (child) => visit(child, into));
  };
  const module: FunctionFacts = { writes: new Set(), calls: new Set(), refs: new Set() };
  for (const statement of file.statements) {
    const named: Array<[string, ts.Node]> = [];
    if (ts.isFunctionDeclaration(statement) && statement.name) named.push([statement.name.text, statement]);
    else if (ts.isClassDeclaration(statement) && statement.name) named.push([statement.name.text, statement]);
    else if (
      ts.isImportDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement)
    )
      continue;
    else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.initializer)
          named.push([declaration.name.text, declaration.initializer]);
      }
    }
    if (named.length === 0) visit(statement, module);
    for (const [name, node] of named) {
      const into: FunctionFacts = { writes: new Set(), calls: new Set(), refs: new Set() };
      visit(node, into);
      facts.set(name, into);
    }
  }
  facts.set('<module>', module);
  return facts;
}

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/**
 * What every libs/db function writes, following its calls to other libs/db functions (names are
 * unique across libs/db: its entries, `@quill/db` and `@quill/db/<owner>`, re-export them flat).
 */
export function dbFunctionWrites(dbSrc: string, tables: ReadonlySet<string>): Map<string, Set<string>> {
  const all = new Map<string, FunctionFacts>();
  for (const path of sourceFiles(dbSrc)) {
    for (const [name, facts] of scanFile(path, readFileSync(path, 'utf8'), tables)) {
      if (name === '<module>') continue;
      const known = all.get(name);
      if (known) {
        for (const table of facts.writes) known.writes.add(table);
        for (const call of facts.calls) known.calls.add(call);
      } else all.set(name, facts);
    }
  }
  const resolved = new Map<string, Set<string>>();
  const resolve = (name: string, seen: Set<string>): Set<string> => {
    const done = resolved.get(name);
    if (done) return done;
    const facts = all.get(name);
    const writes = new Set(facts?.writes ?? []);
    if (facts && !seen.has(name)) {
      seen.add(name);
      for (const call of facts.calls)
        if (all.has(call)) for (const table of resolve(call, seen)) writes.add(table);
    }
    resolved.set(name, writes);
    return writes;
  };
  for (const name of all.keys()) resolve(name, new Set());
  return resolved;
}

/** What each local name a file imports refers to: the module and the name there. */
function importMap(file: ts.SourceFile): Map<string, { from: string; name: string }> {
  const map = new Map<string, { from: string; name: string }>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (statement.importClause?.isTypeOnly) continue;
    const from = statement.moduleSpecifier.text;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements)
        if (!element.isTypeOnly)
          map.set(element.name.text, { from, name: (element.propertyName ?? element.name).text });
    } else if (bindings && ts.isNamespaceImport(bindings)) map.set(bindings.name.text, { from, name: '*' });
  }
  return map;
}

/** Which file of a lib defines each name its index exports (`export { a } from './x.ts'`). */
function libExports(root: string, lib: string): Map<string, string> {
  const index = join(root, 'libs', lib, 'src', 'index.ts');
  const file = ts.createSourceFile(index, readFileSync(index, 'utf8'), ts.ScriptTarget.Latest, true);
  const files = new Map<string, string>();
  for (const statement of file.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier) continue;
    if (!ts.isStringLiteral(statement.moduleSpecifier) || !statement.moduleSpecifier.text.startsWith('.'))
      continue;
    const target = join(dirname(index), statement.moduleSpecifier.text);
    const clause = statement.exportClause;
    if (clause && ts.isNamedExports(clause))
      for (const element of clause.elements) files.set(element.name.text, target);
  }
  return files;
}

/**
 * Every table the code of `srcDir` writes, and where: its own SQL and the libs/db functions it
 * calls, then the same for every declaration of another file or workspace lib it can reach
 * (followed name by name, so a lib imported for a constant does not bring its writers along;
 * libs/db functions through their calls, `dbFunctionWrites`).
 */
export function serviceWrites(
  root: string,
  srcDir: string,
  tables: ReadonlySet<string>,
  dbWrites: ReadonlyMap<string, ReadonlySet<string>>,
): WriteSite[] {
  const sites: WriteSite[] = [];
  const queue: Array<{ path: string; name: string }> = sourceFiles(srcDir).map((path) => ({
    path,
    name: '*',
  }));
  const seen = new Set(queue.map((item) => `${item.path}#${item.name}`));
  const add = (path: string, name: string) => {
    const key = `${path}#${name}`;
    if (seen.has(key) || seen.has(`${path}#*`)) return;
    seen.add(key);
    queue.push({ path, name });
  };
  const exportsByLib = new Map<string, Map<string, string>>();
  const parsed = new Map<
    string,
    { facts: Map<string, FunctionFacts>; imports: Map<string, { from: string; name: string }> }
  >();
  for (let index = 0; index < queue.length; index++) {
    const { path, name: wanted } = queue[index]!;
    let file = parsed.get(path);
    if (!file) {
      const source = readFileSync(path, 'utf8');
      const tree = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
      file = { facts: scanFile(path, source, tables), imports: importMap(tree) };
      parsed.set(path, file);
    }
    const where = relative(root, path);
    // The declarations `wanted` reaches inside this file.
    const reached = new Set<string>(wanted === '*' ? file.facts.keys() : [wanted]);
    for (const name of reached)
      for (const ref of file.facts.get(name)?.refs ?? []) if (file.facts.has(ref)) reached.add(ref);
    for (const name of reached) {
      const facts = file.facts.get(name);
      if (!facts) continue;
      for (const table of facts.writes) sites.push({ table, via: `${where}#${name}` });
      for (const ref of facts.refs) {
        const imported = file.imports.get(ref);
        if (!imported) continue;
        if (imported.from === '@quill/db' || imported.from.startsWith('@quill/db/')) {
          for (const table of dbWrites.get(imported.name) ?? [])
            sites.push({ table, via: `${where}#${name} → ${imported.from} ${imported.name}` });
        } else if (imported.from.startsWith('.')) {
          add(join(dirname(path), imported.from), imported.name);
        } else {
          const lib = /^@quill\/([a-z-]+)$/.exec(imported.from)?.[1];
          if (!lib) continue;
          let exported = exportsByLib.get(lib);
          if (!exported) {
            exported = libExports(root, lib);
            exportsByLib.set(lib, exported);
          }
          const target = exported.get(imported.name);
          if (target) add(target, imported.name);
        }
      }
    }
  }
  return sites;
}
