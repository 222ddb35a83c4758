import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { exportedNames } from '../../scripts/lib-unused-exports.ts';
import { dbFunctionWrites, serviceWrites, sourceFiles, tablesOf, type WriteSite } from './table-writes.ts';

// One owning service per table (docs/architecture.md "What each service owns"): the code of each
// service may write only the tables its row names, every row names only what the code writes,
// and a table with more than one writer must be in the documented list of shared tables.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVICES = ['gateway', 'router', 'writer', 'reviewer', 'context', 'billing'] as const;
type Service = (typeof SERVICES)[number];
/** writer and reviewer are one worker runtime (libs/agent-runtime): one owner. */
const ownerOf = (service: Service) => (service === 'writer' || service === 'reviewer' ? 'workers' : service);

const tables = tablesOf(join(ROOT, 'libs/db/migrations'));
const dbWrites = dbFunctionWrites(join(ROOT, 'libs/db/src'), tables);
const writes = new Map<Service, WriteSite[]>(
  SERVICES.map((service) => [
    service,
    serviceWrites(ROOT, join(ROOT, 'services', service, 'src'), tables, dbWrites),
  ]),
);

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(heading);
  if (start === -1) throw new Error(`docs/architecture.md has no "${heading}"`);
  const rest = markdown.slice(start + heading.length);
  const next = rest.search(/\n##+ /);
  return next === -1 ? rest : rest.slice(0, next);
}

function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|-]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

const backticked = (cell: string) => [...cell.matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((match) => match[1]!);

const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
/** The tables each service's row lists under "writes (PostgreSQL)". */
const documented = new Map<Service, Set<string>>();
for (const [who, writesCell] of tableRows(section(architecture, '## What each service owns'))) {
  for (const service of SERVICES.filter((name) => new RegExp(`\\b${name}\\b`).test(who!.split('(')[0]!))) {
    documented.set(service, new Set(backticked(writesCell!).filter((name) => tables.has(name))));
  }
}
/** Tables with more than one owner, and who, from the "Tables with more than one writer" list. */
const shared = new Map<string, Set<string>>(
  tableRows(section(architecture, '### Tables with more than one writer')).map(([table, writers]) => [
    backticked(table!)[0]!,
    new Set(writers!.split(',').map((name) => name.trim())),
  ]),
);

/**
 * The tables two owners write, and which two (docs/decisions/0022-two-writer-tables-and-their-guards.md):
 * the author's edge (gateway) and the agent's write path (workers) for the project's text and
 * state, the gateway and the router for the chat. A third writer of these, or a new shared
 * table, fails here even once the docs name it: it needs a decision record first.
 */
const TWO_WRITER_TABLES: Record<string, string[]> = {
  files: ['gateway', 'workers'],
  file_versions: ['gateway', 'workers'],
  projects: ['gateway', 'workers'],
  artifacts: ['gateway', 'workers'],
  state_commits: ['gateway', 'workers'],
  messages: ['gateway', 'router'],
};

describe('one owner per table', () => {
  it('reads a row for every service from docs/architecture.md', () => {
    expect([...documented.keys()].sort()).toEqual([...SERVICES].sort());
  });

  it.each(SERVICES)('%s writes only the tables its row names, and every one of them', (service) => {
    const found = writes.get(service)!;
    const allowed = documented.get(service)!;
    const undocumented = found.filter((site) => !allowed.has(site.table));
    expect(undocumented, 'writes a table its row does not name').toEqual([]);
    const written = new Set(found.map((site) => site.table));
    expect(
      [...allowed].filter((table) => !written.has(table)),
      'row names a table the code never writes',
    ).toEqual([]);
  });

  it('a table with more than one owner is one of the documented shared tables, with exactly those owners', () => {
    const owners = new Map<string, Set<string>>();
    for (const service of SERVICES)
      for (const table of documented.get(service)!)
        owners.set(table, new Set([...(owners.get(table) ?? []), ownerOf(service)]));
    const several = [...owners].filter(([, who]) => who.size > 1);
    expect(Object.fromEntries(several.map(([table, who]) => [table, [...who].sort()]))).toEqual(
      Object.fromEntries([...shared].map(([table, who]) => [table, [...who].sort()])),
    );
  });

  it('the tables the code of more than one owner writes are exactly the two-writer tables, each with its two', () => {
    const owners = new Map<string, Set<string>>();
    for (const service of SERVICES)
      for (const site of writes.get(service)!)
        owners.set(site.table, new Set([...(owners.get(site.table) ?? []), ownerOf(service)]));
    const several = [...owners].filter(([, who]) => who.size > 1);
    expect(Object.fromEntries(several.map(([table, who]) => [table, [...who].sort()]))).toEqual(
      TWO_WRITER_TABLES,
    );
    expect(Object.fromEntries([...shared].map(([table, who]) => [table, [...who].sort()]))).toEqual(
      TWO_WRITER_TABLES,
    );
  });

  it('runs, session phases and credits have one owner each', () => {
    const ownersOf = (table: string) =>
      new Set(
        SERVICES.filter((service) => writes.get(service)!.some((site) => site.table === table)).map(ownerOf),
      );
    expect([...ownersOf('runs')]).toEqual(['router']);
    expect([...ownersOf('session_phases')]).toEqual(['router']);
    expect([...ownersOf('run_archives')]).toEqual(['router']);
    expect([...ownersOf('quota_accounts')]).toEqual(['billing']);
    expect([...ownersOf('credit_grants')]).toEqual(['billing']);
    expect([...ownersOf('run_fences')]).toEqual(['workers']);
    expect([...ownersOf('history_compactions')]).toEqual(['context']);
  });
});

// libs/db is split by owner (docs/decisions/0021-libs-db-split-by-owner.md): `@quill/db` is the
// pool, migrations, ids and reads any package may import; `@quill/db/<owner>` holds the functions
// that write, and test/arch/import-rules.ts lets only that owner's code import it.
describe('libs/db entries', () => {
  const entry = (subpath: string) => join(ROOT, 'libs/db/src', subpath, 'index.ts');
  const writesOf = (name: string) => [...(dbWrites.get(name) ?? [])];

  it('@quill/db exports no function that writes', () => {
    const writers = exportedNames(entry('.')).filter((name) => writesOf(name).length > 0);
    expect(writers.map((name) => `${name} writes ${writesOf(name).join(', ')}`)).toEqual([]);
  });

  it.each(['gateway', 'router', 'workers', 'context', 'billing'])(
    '@quill/db/%s exports only functions that write, and only tables its owner may write',
    (owner) => {
      const names = exportedNames(entry(owner));
      expect(names.length).toBeGreaterThan(0);
      expect(
        names.filter((name) => writesOf(name).length === 0),
        'exports a reader',
      ).toEqual([]);
      const services = SERVICES.filter((service) => ownerOf(service) === owner);
      const allowed = new Set(services.flatMap((service) => [...documented.get(service)!]));
      const foreign = names.flatMap((name) =>
        writesOf(name)
          .filter((table) => !allowed.has(table))
          .map((table) => `${name} writes ${table}`),
      );
      expect(foreign, `writes a table the ${owner} row does not name`).toEqual([]);
    },
  );
});

describe('libs/db modules', () => {
  it("an owner's module calls no write function of another owner's module (shared ones live in shared-tables/)", () => {
    const owners = ['gateway', 'router', 'workers', 'context', 'billing'];
    const foreign: string[] = [];
    for (const owner of owners) {
      for (const path of sourceFiles(join(ROOT, 'libs/db/src', owner))) {
        const text = readFileSync(path, 'utf8');
        for (const match of text.matchAll(/import (type )?\{([^}]*)\} from '\.\.\/([a-z-]+)\/[^']+';/g)) {
          const [, typeOnly, names, dir] = match;
          if (typeOnly || dir === owner || !owners.includes(dir!)) continue;
          for (const name of names!.split(',').map((each) => each.trim()))
            if (name && !name.startsWith('type ') && (dbWrites.get(name)?.size ?? 0) > 0)
              foreign.push(`${owner}/${path.split('/').pop()} calls ${dir}'s ${name}`);
        }
      }
    }
    expect(foreign).toEqual([]);
  });
});

describe('the write scanner', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quill-owners-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds SQL in a service, libs/db calls through their callees, and ignores what is only imported', () => {
    mkdirSync(join(dir, 'src'));
    writeFileSync(
      join(dir, 'src', 'planted.ts'),
      [
        "import { getRun } from '@quill/db';",
        "import { finishRun, setSessionPhase } from '@quill/db/router';",
        "import { WRITE_TOOL_NAMES } from '@quill/tools';",
        'export async function end(pool: never) {',
        "  await pool.query(`UPDATE runs SET phase = 'done' WHERE run_id = $1`);",
        "  await finishRun(pool, 'r', { phase: 'done' });",
        "  await pool.query('INSERT INTO billing_ledger (run_id) VALUES ($1) ON CONFLICT DO UPDATE SET x = 1');",
        '  return [getRun, WRITE_TOOL_NAMES];',
        '}',
        '// setSessionPhase is imported but never used here.',
      ].join('\n'),
    );
    const sites = serviceWrites(ROOT, join(dir, 'src'), tables, dbWrites);
    expect(sites.map((site) => site.table).sort()).toEqual([
      'billing_ledger',
      'runs',
      'runs',
      'session_phases',
    ]);
    expect(sites.find((site) => site.via.includes('finishRun'))?.via).toMatch(
      /planted\.ts#end → @quill\/db\/router finishRun/,
    );
  });
});
