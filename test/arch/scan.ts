import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkImport,
  cycleViolations,
  type ImportEdge,
  isSourceFile,
  resolveTarget,
  type Violation,
} from './import-rules.ts';
import { importsOf } from './imports.ts';
import { REPO_ROOT, readWorkspace, type WorkspacePackage } from './workspace.ts';

export interface WorkspaceScan {
  workspace: WorkspacePackage[];
  /** Every file scanned, repository-relative. */
  files: string[];
  edges: ImportEdge[];
  violations: Violation[];
  /** Package → the workspace packages its src imports. */
  srcGraph: Map<string, Set<string>>;
}

const SOURCE_FILES = '**/*.{ts,tsx,mts,cts}';
const NOT_SOURCE = ['**/node_modules/**', '**/dist/**'];

/** Parses every TypeScript file of every workspace package and checks each import against the rules. */
export function scanWorkspace(root = REPO_ROOT): WorkspaceScan {
  const workspace = readWorkspace(root);
  const files: string[] = [];
  const edges: ImportEdge[] = [];
  const violations: Violation[] = [];
  const srcGraph = new Map<string, Set<string>>(workspace.map((pkg) => [pkg.name, new Set<string>()]));
  for (const pkg of workspace) {
    const found = globSync(SOURCE_FILES, { cwd: join(root, pkg.dir), exclude: NOT_SOURCE });
    for (const relativeFile of found.sort()) {
      const file = `${pkg.dir}/${relativeFile.split('\\').join('/')}`;
      files.push(file);
      for (const site of importsOf(file, readFileSync(join(root, file), 'utf8'))) {
        const edge = { file, line: site.line, specifier: site.specifier };
        edges.push(edge);
        violations.push(...checkImport(edge, pkg, workspace));
        const target = resolveTarget(edge, pkg, workspace);
        if (target.kind === 'package' && isSourceFile(file, pkg))
          srcGraph.get(pkg.name)?.add(target.pkg.name);
      }
    }
  }
  violations.push(...cycleViolations(srcGraph));
  return { workspace, files, edges, violations, srcGraph };
}
