import ts from 'typescript';

function parse(fileName: string, text: string): ts.SourceFile {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
}

export interface ImportSite {
  specifier: string;
  /** 1-based, for the report. */
  line: number;
}

/**
 * Every module a file names: static imports and re-exports (`import type` included: a type-only
 * import still couples the packages), `import()` with a literal argument, `import x = require()`
 * and `typeof import('…')` types. Parsed with the TypeScript compiler, so strings and comments
 * that look like imports are not counted.
 */
export function importsOf(fileName: string, text: string): ImportSite[] {
  const source = parse(fileName, text);
  const sites: ImportSite[] = [];
  const add = (node: ts.Node | undefined) => {
    if (!node || !ts.isStringLiteralLike(node)) return;
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    sites.push({ specifier: node.text, line: line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

export interface ModuleState {
  /** The variable's name. */
  name: string;
  line: number;
  /** `Map`, `WeakMap`, … */
  type: string;
}

const STATEFUL_COLLECTIONS = new Set(['Map', 'WeakMap']);

/**
 * Top-level `const x = new Map(…)` / `new WeakMap(…)`: state made when the module is imported,
 * shared by everything in the process that imports it (docs/architecture.md "Boundaries").
 */
export function moduleLevelMapsOf(fileName: string, text: string): ModuleState[] {
  const source = parse(fileName, text);
  const found: ModuleState[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const initializer = declaration.initializer;
      if (!initializer || !ts.isNewExpression(initializer) || !ts.isIdentifier(initializer.expression))
        continue;
      if (!STATEFUL_COLLECTIONS.has(initializer.expression.text)) continue;
      const { line } = source.getLineAndCharacterOfPosition(declaration.getStart(source));
      found.push({
        name: declaration.name.getText(source),
        line: line + 1,
        type: initializer.expression.text,
      });
    }
  }
  return found;
}
