import { visibleMessagesSql } from '../branch-path.ts';
import type { FileSummary } from '../context-files.ts';
import { PROJECT_COLUMNS, type Project, type ProjectRow, toProject } from '../gateway/projects.ts';
import { RUN_SKILLS_SQL } from '../gateway/skill-versions.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import {
  type CompactionRow,
  type HistoryCompaction,
  type HistoryMessage,
  type HistoryMessageRow,
  toCompaction,
  toHistoryMessage,
} from './session-history.ts';

/** What a compile decides from before it knows which files it shows (the context's loader). */
export interface CompileBasics {
  /** null when the project does not exist. */
  project: Project | null;
  summaries: FileSummary[];
  /** The files this run saved a version of (asked for the quality reviewer only). */
  reviewTargets: string[];
  /**
   * The run's skills, name and purpose, by name: the versions it was launched with
   * (docs/kernel.md "Definitions and pinning").
   */
  catalog: Array<{ name: string; description: string }>;
  compaction: HistoryCompaction | null;
  /** The latest `recentLimit` messages of the session's active branch path, oldest first. */
  recent: HistoryMessage[];
  /** The run's stored turn context (the context service checks its shape), or null. */
  storedTurn: unknown;
  /** The project's task board (a run's first compile puts it in the turn context). */
  taskBoard: unknown[];
}

/**
 * JSON carries timestamps as text: the format the pool hands out for `timestamptz` columns
 * (`timestamptzToIso` in pool.ts, microseconds kept), so a value reads the same either way.
 */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The first reads of a compile in one statement, on the way to the first token: the project, its
 * file list (metadata only, and whether each file's text is an unaccepted AI artifact), the run's
 * skills, the session's latest compaction and latest messages on its active branch path, the
 * run's turn context and the project's task board, and for the quality reviewer the files the run
 * wrote. They were up to eight statements in parallel, each a round trip and a backend of its
 * own (docs/decisions/0053-compile-reads-in-one-statement.md); each part keeps the query and the
 * order it had, and libs/db/test/compile-inputs.test.ts holds them to what they read.
 */
export async function readCompileBasics(
  db: Queryable,
  input: {
    projectId: string;
    sessionId: string;
    runId: string;
    userId: string;
    recentLimit: number;
    reviewTargets: boolean;
  },
): Promise<CompileBasics> {
  const uuidOrNull = (value: string) => (isUuid(value) ? value : null);
  // $1 run and $2 user are the skills query's own parameters.
  const { rows } = await db.query<{
    project: ProjectRow | null;
    summaries: SummaryRow[] | null;
    review_targets: string[] | null;
    catalog: Array<{ name: string; description: string }> | null;
    compaction: CompactionRow | null;
    recent: HistoryMessageRow[] | null;
    stored_turn: unknown;
    task_board: unknown;
  }>(
    `WITH RECURSIVE ${visibleMessagesSql('$4::uuid')},
     latest AS (
       SELECT m.id, m.seq, m.run_id, m.role, m.content, m.breadcrumbs, m.created_at
       FROM messages m JOIN visible v ON v.id = m.id
       ORDER BY m.created_at DESC, m.seq DESC LIMIT $5
     )
     SELECT
       (SELECT json_build_object(${projectFields()}) FROM projects p WHERE p.id = $3::uuid) AS project,
       (SELECT json_agg(json_build_object(
           'id', f.id, 'folder', f.folder, 'title', f.title, 'file_type', f.file_type,
           'visibility', f.visibility, 'chars', f.chars, 'version', f.version,
           'created_at', ${iso('f.created_at')}, 'updated_at', ${iso('f.updated_at')},
           'unaccepted', (SELECT a.state FROM artifacts a
             WHERE a.text_file_id = f.id AND a.state IN ('drafted', 'under_review', 'revision_requested')
               AND (a.placement = 'draft' OR a.version = f.version)
             ORDER BY a.created_at DESC LIMIT 1))
         ORDER BY f.folder, f.title, f.created_at)
        FROM files f WHERE f.project_id = $3::uuid AND NOT f.deleted) AS summaries,
       CASE WHEN $6::boolean THEN
         (SELECT json_agg(DISTINCT file_id) FROM file_versions WHERE run_id = $1::uuid)
       END AS review_targets,
       (SELECT json_agg(json_build_object('name', skill.name, 'description', skill.description)
          ORDER BY skill.name)
        FROM (${RUN_SKILLS_SQL}) skill) AS catalog,
       (SELECT json_build_object(
           'id', c.id, 'session_id', c.session_id, 'through_seq', c.through_seq, 'summary', c.summary,
           'archive_file_id', c.archive_file_id, 'compacted_messages', c.compacted_messages,
           'created_at', ${iso('c.created_at')})
        FROM history_compactions c WHERE c.session_id = $4::uuid
        ORDER BY c.through_seq DESC LIMIT 1) AS compaction,
       (SELECT json_agg(json_build_object(
           'id', l.id, 'seq', l.seq, 'run_id', l.run_id, 'role', l.role, 'content', l.content,
           'breadcrumbs', l.breadcrumbs, 'created_at', ${iso('l.created_at')})
         ORDER BY l.created_at, l.seq)
        FROM latest l) AS recent,
       (SELECT turn FROM run_turn_contexts WHERE run_id = $1::uuid) AS stored_turn,
       -- Tolerated absent, so this read never breaks on a database without the column.
       (SELECT to_jsonb(p) -> 'task_board' FROM projects p WHERE p.id = $3::uuid) AS task_board`,
    [
      uuidOrNull(input.runId),
      uuidOrNull(input.userId),
      uuidOrNull(input.projectId),
      uuidOrNull(input.sessionId),
      input.recentLimit,
      input.reviewTargets,
    ],
  );
  const row = rows[0];
  const board = row?.task_board;
  return {
    project: row?.project ? toProject(row.project) : null,
    summaries: (row?.summaries ?? []).map(toSummary),
    reviewTargets: row?.review_targets ?? [],
    // The skills query needs both ids; without them a run reads none (listRunSkills' rule).
    catalog: isUuid(input.runId) && isUuid(input.userId) ? (row?.catalog ?? []) : [],
    compaction: row?.compaction ? toCompaction(row.compaction) : null,
    recent: (row?.recent ?? []).map(toHistoryMessage),
    storedTurn: row?.stored_turn ?? null,
    taskBoard: Array.isArray(board) ? board : [],
  };
}

/** PROJECT_COLUMNS as JSON fields, the timestamps as the pool reads them. */
function projectFields(): string {
  return PROJECT_COLUMNS.split(',')
    .map((column) => column.trim().replace(/^p\./, ''))
    .map((name) => `'${name}', ${name.endsWith('_at') ? iso(`p.${name}`) : `p.${name}`}`)
    .join(', ');
}

/** A file-list row as the statement builds it (timestamps already as the pool reads them). */
interface SummaryRow {
  id: string;
  folder: string;
  title: string;
  file_type: string;
  visibility: string;
  chars: number;
  version: number;
  unaccepted: FileSummary['unaccepted'];
  created_at: string;
  updated_at: string;
}

function toSummary(row: SummaryRow): FileSummary {
  return {
    id: row.id,
    folder: row.folder,
    title: row.title,
    fileType: row.file_type,
    visibility: row.visibility,
    chars: row.chars,
    version: row.version,
    unaccepted: row.unaccepted ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
