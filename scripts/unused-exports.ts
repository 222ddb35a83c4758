/**
 * `node scripts/unused-exports.ts [--json]`: the exports of each lib's `src/index.ts` (and of its
 * subpath index entries, libs/db's `@quill/db/<owner>`) that no
 * file outside the lib imports (candidates to drop from the public surface, see
 * docs/architecture.md "Boundaries"), and those only tests or scripts use. It only reports; the
 * exit code is 0 either way.
 */
import { join } from 'node:path';
import { unusedLibExports } from './lib-unused-exports.ts';

const root = join(import.meta.dirname, '..');
const libs = unusedLibExports(root);

if (process.argv.includes('--json')) {
  const report = libs.map(({ name, unused, testOnly }) => ({ name, unused, testOnly }));
  console.log(JSON.stringify(report, null, 2));
} else {
  let total = 0;
  for (const lib of libs) {
    total += lib.unused.length;
    console.log(`${lib.name} (${lib.entry}): ${lib.exported.length} exports`);
    console.log(`  unused outside the lib (${lib.unused.length}): ${lib.unused.join(', ') || '—'}`);
    console.log(`  used only by tests/scripts (${lib.testOnly.length}): ${lib.testOnly.join(', ') || '—'}`);
  }
  console.log(`\n${total} exports unused outside their lib`);
}
