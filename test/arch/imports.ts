import ts from 'typescript';

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
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
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
