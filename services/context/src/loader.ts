import { type ContextCompileRequest, isoNow } from '@quill/contracts';
import {
  getRunSkill,
  type HistoryMessage,
  historyArchiveTitleOf,
  listHistoryMessages,
  type RunSkill,
  readCompileBasics,
} from '@quill/db';
import type { Pool } from 'pg';
import { type AssemblyRequest, assemblyReads, sceneIds } from './assembler.ts';
import { chosenSkillNames, skillsToRead } from './chosen-skills.ts';
import {
  type CompileInputs,
  ownAssembly,
  partitionFiles,
  sharedAssembly,
  workingSetHistory,
} from './compose.ts';
import type { ListedFile, ProjectTexts } from './project-texts.ts';
import { queryTerms } from './query-terms.ts';
import { searchLimit } from './retrieval.ts';
import { parseTurnRecord } from './turn-record.ts';
import { workingSetCandidates } from './working-set.ts';

// Enough recent messages to find the last two assistant replies for the working set.
const RECENT_MESSAGES = 12;

/**
 * Everything one compile decides from, read up front into a plain value (compose.ts decides).
 * Three rounds of reads: what depends only on the request, in one statement; then, in parallel,
 * the history, the skills and the texts that choose the candidates (the scene, the working set);
 * then the candidates' texts and the search hits. Texts come through the replica's cache
 * (project-texts.ts), so a compile reads only the files that changed since this replica last read
 * them. null when the project does not exist.
 */
export async function loadCompileInputs(
  pool: Pool,
  texts: ProjectTexts,
  request: ContextCompileRequest,
): Promise<CompileInputs | null> {
  const compiledAt = isoNow();
  // An unknown project is rare enough that reading the rest for nothing costs less than a round
  // trip every time; so is the task board, which only a run's first compile uses.
  const basics = await readCompileBasics(pool, {
    projectId: request.project_id,
    sessionId: request.session_id,
    runId: request.run_id,
    userId: request.user_id,
    recentLimit: RECENT_MESSAGES,
    reviewTargets: request.role === 'quality_reviewer',
  });
  const { project, summaries, reviewTargets, catalog, compaction, recent } = basics;
  if (!project) return null;
  const listed = new Map<string, ListedFile>(summaries.map((file) => [file.id, file]));
  const storedTurn = parseTurnRecord(basics.storedTurn);
  const building = storedTurn === null;
  const partition = partitionFiles(summaries, request, reviewTargets);
  const assemblies: Array<{ kind: 'shared' | 'own'; request: AssemblyRequest }> = [];
  if (building) assemblies.push({ kind: 'shared', request: sharedAssembly(request, partition) });
  const own = ownAssembly(request, partition);
  if (own) assemblies.push({ kind: 'own', request: own });
  const visibleIds = new Set(partition.visible.map((file) => file.id));
  const workingSetIds = workingSetCandidates(workingSetHistory({ recent, request }))
    .map((file) => file.id)
    .filter((id) => visibleIds.has(id));
  const archiveId = compaction?.archiveFileId;
  const archiveListed = archiveId ? summaries.find((file) => file.id === archiveId)?.title : undefined;

  const [firstContents, stored, chosenSkills, archiveTitle] = await Promise.all([
    texts.contents(
      request.project_id,
      [...workingSetIds, ...assemblies.flatMap((assembly) => sceneIds(assembly.request))],
      listed,
    ),
    historyAfterCompaction(pool, request, compaction?.throughSeq ?? 0, recent),
    building ? readSkills(pool, request, catalog) : Promise.resolve(new Map<string, RunSkill>()),
    archiveId && !archiveListed ? archiveTitleOf(pool, request, archiveId) : archiveListed,
  ]);
  const taskBoard = building ? basics.taskBoard : [];

  const reads = assemblies.map((assembly) => assemblyReads(assembly.request, firstContents));
  const missing = [...new Set(reads.flat())].filter((id) => !firstContents.has(id));
  const terms = queryTerms(request.message);
  const [moreContents, hits] = await Promise.all([
    texts.contents(request.project_id, missing, listed),
    texts.search({
      projectId: request.project_id,
      listed,
      parts: assemblies.map((assembly, index) => ({
        files: assembly.request.files.map((file) => listed.get(file.id)!),
        limit: searchLimit(reads[index]!.length + workingSetIds.length),
      })),
      terms,
      query: request.message.slice(0, 200),
    }),
  ]);
  const hitsOf = (kind: 'shared' | 'own') =>
    hits[assemblies.findIndex((assembly) => assembly.kind === kind)] ?? [];
  return {
    request,
    compiledAt,
    project,
    summaries,
    reviewTargets,
    catalog,
    recent,
    compaction,
    archiveTitle,
    stored,
    storedTurn,
    taskBoard,
    chosenSkills,
    contents: new Map([...firstContents, ...moreContents]),
    sharedHits: hitsOf('shared'),
    roleHits: hitsOf('own'),
  };
}

/**
 * The session's messages after its last compaction. A session whose whole history came back in
 * the recent read (fewer messages than asked for) is read once: the same rows, in the same order.
 */
async function historyAfterCompaction(
  pool: Pool,
  request: ContextCompileRequest,
  throughSeq: number,
  recent: HistoryMessage[],
): Promise<HistoryMessage[]> {
  if (recent.length < RECENT_MESSAGES) return recent.filter((message) => message.seq > throughSeq);
  return listHistoryMessages(pool, request.session_id, { afterSeq: throughSeq });
}

async function readSkills(
  pool: Pool,
  request: ContextCompileRequest,
  catalog: ReadonlyArray<{ name: string }>,
): Promise<Map<string, RunSkill>> {
  const names = skillsToRead(
    chosenSkillNames(
      request.message,
      catalog.map((skill) => skill.name),
    ),
  );
  const skills = await Promise.all(
    names.map((name) => getRunSkill(pool, { runId: request.run_id, userId: request.user_id, name })),
  );
  return new Map(skills.filter((skill) => skill !== null).map((skill) => [skill.name, skill]));
}

/**
 * An archive not in the file list: written after it was read, not written yet (the session's next
 * step writes it, docs/decisions/0022), or deleted since. Its title by id, or undefined when deleted.
 */
export async function archiveTitleOf(
  pool: Pool,
  request: Pick<ContextCompileRequest, 'project_id' | 'session_id'>,
  archiveId: string,
): Promise<string | undefined> {
  return historyArchiveTitleOf(pool, {
    projectId: request.project_id,
    sessionId: request.session_id,
    fileId: archiveId,
  });
}
