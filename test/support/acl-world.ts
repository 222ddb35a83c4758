import { API_ROUTES } from '@quill/contracts';
import { listArtifacts } from '@quill/db';
import {
  addProjectMember,
  appendMessage,
  createApiKey,
  createBranch,
  createFile,
  createProject,
  createSession,
  ensureActiveBranch,
  recordAiArtifact,
  takeSnapshot,
} from '@quill/db/gateway';
import { createRun, finishRun, startRun } from '@quill/db/router';
import { expect } from 'vitest';
import { type Call, newUser } from './product-client.ts';
import type { Stack } from './stack.ts';

/**
 * The project ACL route by route (README "HTTP API"), shared by test/e2e/product-acl.test.ts
 * (the `/projects` routes) and test/e2e/product-acl-sessions.test.ts (every other route): for
 * every route of the route table, what an owner, an editor, a viewer and a stranger (no member)
 * get. Each request runs against a fresh project, so a write by one role never changes what the
 * next one sees.
 */
export type Role = 'owner' | 'editor' | 'viewer' | 'stranger';
export const ROLES: readonly Role[] = ['owner', 'editor', 'viewer', 'stranger'];
export type People = Record<Role, { id: string; call: Call }>;

export async function newPeople(stack: Stack): Promise<People> {
  const entries = await Promise.all(
    ROLES.map(async (role) => [role, await newUser(stack, `acl-${role}`)] as const),
  );
  return Object.fromEntries(
    entries.map(([role, person]) => [role, { id: person.user.id, call: person.call }]),
  ) as People;
}

/** A project owned by `owner` with an editor, a viewer, files, a draft and a finished run. */
export async function world(stack: Stack, people: People) {
  const project = await createProject(stack.pool, { ownerId: people.owner.id, title: 'ACL' });
  await addProjectMember(stack.pool, project.id, people.editor.id, 'editor');
  await addProjectMember(stack.pool, project.id, people.viewer.id, 'viewer');
  const extra = await newUser(stack, 'acl-extra');
  await addProjectMember(stack.pool, project.id, extra.user.id, 'viewer');
  const newcomer = await newUser(stack, 'acl-newcomer');
  const file = await createFile(stack.pool, {
    projectId: project.id,
    title: '第一章',
    fileType: 'draft',
    content: '雨。',
  });
  const draft = await createFile(stack.pool, {
    projectId: project.id,
    title: '第一章（AI 草稿）',
    fileType: 'draft',
    content: '雪。',
  });
  await stack.pool.query('UPDATE files SET draft_of = $2 WHERE id = $1', [draft.id, file.id]);
  const session = await createSession(stack.pool, {
    projectId: project.id,
    userId: people.owner.id,
    title: '会话',
  });
  const runId = crypto.randomUUID();
  await createRun(stack.pool, {
    runId,
    sessionId: session.sessionId,
    projectId: project.id,
    userId: people.owner.id,
    generationMode: 'fast',
  });
  await startRun(stack.pool, runId);
  await appendMessage(stack.pool, { sessionId: session.sessionId, runId, role: 'user', content: '写' });
  await takeSnapshot(stack.pool, { projectId: project.id, kind: 'run_start', runId });
  await finishRun(stack.pool, runId, { phase: 'done', stopReason: 'completed' });
  const snapshot = await takeSnapshot(stack.pool, { projectId: project.id, kind: 'manual', label: 'acl' });
  const rootBranch = await ensureActiveBranch(stack.pool, session.sessionId);
  const branchId = await createBranch(stack.pool, {
    sessionId: session.sessionId,
    parentId: rootBranch,
    forkSeq: 0,
    baseSnapshotId: snapshot!.id,
  });
  const ownerKey = await createApiKey(stack.pool, people.owner.id, 'acl');
  // An AI write of the run awaiting acceptance (docs/kernel.md "Artifacts and acceptance").
  await stack.pool.query("UPDATE projects SET artifact_acceptance = 'review' WHERE id = $1", [project.id]);
  await recordAiArtifact(stack.pool, {
    projectId: project.id,
    runId,
    fileId: file.id,
    textFileId: file.id,
    placement: 'in_file',
    version: 1,
    baseVersion: 0,
  });
  const [artifact] = await listArtifacts(stack.pool, { runId });
  return {
    artifactId: artifact!.id,
    projectId: project.id,
    fileId: file.id,
    draftId: draft.id,
    sessionId: session.sessionId,
    runId,
    extraId: extra.user.id,
    newcomerId: newcomer.user.id,
    ownerKeyId: ownerKey.id,
    snapshotId: snapshot!.id,
    branchId,
  };
}
export type World = Awaited<ReturnType<typeof world>>;

export interface Case {
  /** The route table entry, `METHOD /path`. */
  route: string;
  request: (w: World) => { path: string; body?: unknown };
  expect: Record<Role, number>;
}
export const all = (status: number) => ({ owner: status, editor: status, viewer: status, stranger: status });
export const read = { owner: 200, editor: 200, viewer: 200, stranger: 404 };
export const write = (status: number) => ({ owner: status, editor: status, viewer: 403, stranger: 404 });
export const ownerOnly = (status: number) => ({ owner: status, editor: 403, viewer: 403, stranger: 404 });
export const ownItem = (status: number) => ({ owner: status, editor: 404, viewer: 404, stranger: 404 });

export const P = (w: World) => `/projects/${w.projectId}`;
export const F = (w: World) => `${P(w)}/files/${w.fileId}`;
/** Routes whose access rules are tested elsewhere, and where. */
export const ELSEWHERE: Record<string, string> = {
  'GET /health': 'no bearer (api-edge.test.ts)',
  'GET /openapi.json': 'no bearer (openapi.test.ts)',
  'POST /auth/token': 'no bearer (api-secrets.test.ts)',
  'POST /agent/stream': 'starts a run: run-control.test.ts (stranger 404, viewer 403)',
  'GET /agent/runs/:runId/stream': 'a live run: run-control.test.ts, browser-stream.test.ts',
  'POST /agent/runs/:runId/stream-ticket': 'a live run: browser-stream.test.ts',
  'POST /agent/stop': 'a live run: run-control.test.ts',
  'POST /agent/steer': 'a live run: run-control.test.ts',
  'POST /agent/suggest': 'a model call: llm-failover.test.ts',
  'POST /sessions/:sessionId/regenerate':
    "starts a run: branches.test.ts (another author's session 404); the session's own ACL as the branch routes",
  'POST /projects/:projectId/artifacts/:artifactId/request-revision':
    'starts a run: kernel-artifacts.test.ts (404, 400, 202); the same owner/editor check as accept',
  'POST /projects/import': 'a zip body, makes a project of the caller: product-transfer.test.ts',
  'POST /skills/import': "the caller's own skills: context-memory.test.ts",
  'PATCH /skills/:name': "the caller's own skills: context-memory.test.ts",
  'GET /skills/:name/export': "the caller's own skills: context-memory.test.ts",
  'DELETE /skills/:name': "the caller's own skills: context-memory.test.ts",
};

/** Which of the two ACL files covers a route: `/projects…` routes, or the others. */
export const aclPart = (route: string): 'projects' | 'others' =>
  route.split(' ')[1]!.startsWith('/projects') ? 'projects' : 'others';

/**
 * Every route of the route table in `part` is one of `cases` or tested elsewhere, and every case
 * names a route of the table in `part`.
 */
export function expectPartCovered(part: 'projects' | 'others', cases: readonly Case[]): void {
  const inPart = Object.keys(ELSEWHERE).filter((route) => aclPart(route) === part);
  const covered = new Set([...cases.map((entry) => entry.route), ...inPart]);
  const routes = API_ROUTES.map((route) => `${route.method} ${route.path}`).filter(
    (route) => aclPart(route) === part,
  );
  expect(routes.filter((route) => !covered.has(route))).toEqual([]);
  expect([...covered].filter((route) => !routes.includes(route))).toEqual([]);
}

export const caseLabel = (entry: Case) =>
  [`${entry.route} ${JSON.stringify(entry.request(placeholder()).body ?? '')}`, entry] as const;

/** One route for the four roles, each against a fresh project: the statuses `entry` expects. */
export async function expectCase(stack: Stack, people: People, entry: Case): Promise<void> {
  const method = entry.route.split(' ')[0]!;
  const got: Record<string, number> = {};
  for (const role of ROLES) {
    const { path, body } = entry.request(await world(stack, people));
    const reply = await people[role].call(method, path, body);
    got[role] = reply.status;
    // A success answers with the body the route table (and so the OpenAPI document) promises.
    const declared = API_ROUTES.find((route) => `${route.method} ${route.path}` === entry.route)!.success;
    if (reply.status === declared.status && declared.body) {
      const parsed = declared.body.safeParse(reply.body);
      expect(parsed.success, `${role} ${method} ${path}: ${parsed.error?.message}`).toBe(true);
    }
    if (reply.status >= 400) expect(reply.body.error.code, `${role} ${method} ${path}`).toBeTypeOf('string');
  }
  expect(got).toEqual(entry.expect);
}

export function placeholder(): World {
  const id = '00000000-0000-4000-8000-000000000000';
  return {
    artifactId: id,
    projectId: id,
    fileId: id,
    draftId: id,
    sessionId: id,
    runId: id,
    extraId: id,
    newcomerId: id,
    ownerKeyId: id,
    snapshotId: id,
    branchId: id,
  };
}
