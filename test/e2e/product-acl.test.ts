import { API_ROUTES } from '@quill/contracts';
import {
  addProjectMember,
  appendMessage,
  createApiKey,
  createBranch,
  createFile,
  createProject,
  createRun,
  createSession,
  ensureActiveBranch,
  finishRun,
  listArtifacts,
  recordAiArtifact,
  startRun,
  takeSnapshot,
} from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Call, newUser } from '../support/product-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * The project ACL route by route (README "HTTP API"): for every route of the route table, what
 * an owner, an editor, a viewer and a stranger (no member) get. Each request runs against a
 * fresh project, so a write by one role never changes what the next one sees.
 */
let stack: Stack;
type Role = 'owner' | 'editor' | 'viewer' | 'stranger';
const ROLES: readonly Role[] = ['owner', 'editor', 'viewer', 'stranger'];
let people: Record<Role, { id: string; call: Call }>;

beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  const entries = await Promise.all(
    ROLES.map(async (role) => [role, await newUser(stack, `acl-${role}`)] as const),
  );
  people = Object.fromEntries(
    entries.map(([role, person]) => [role, { id: person.user.id, call: person.call }]),
  ) as typeof people;
});
afterAll(async () => {
  await stack?.stop();
});

/** A project owned by `owner` with an editor, a viewer, files, a draft and a finished run. */
async function world() {
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
type World = Awaited<ReturnType<typeof world>>;

interface Case {
  /** The route table entry, `METHOD /path`. */
  route: string;
  request: (w: World) => { path: string; body?: unknown };
  expect: Record<Role, number>;
}
const all = (status: number) => ({ owner: status, editor: status, viewer: status, stranger: status });
const read = { owner: 200, editor: 200, viewer: 200, stranger: 404 };
const write = (status: number) => ({ owner: status, editor: status, viewer: 403, stranger: 404 });
const ownerOnly = (status: number) => ({ owner: status, editor: 403, viewer: 403, stranger: 404 });
const ownItem = (status: number) => ({ owner: status, editor: 404, viewer: 404, stranger: 404 });

const P = (w: World) => `/projects/${w.projectId}`;
const F = (w: World) => `${P(w)}/files/${w.fileId}`;
const CASES: Case[] = [
  { route: 'GET /projects', request: () => ({ path: '/projects' }), expect: all(200) },
  {
    route: 'POST /projects',
    request: () => ({ path: '/projects', body: { title: '新' } }),
    expect: all(201),
  },
  { route: 'GET /projects/:projectId', request: (w) => ({ path: P(w) }), expect: read },
  {
    route: 'PATCH /projects/:projectId',
    request: (w) => ({ path: P(w), body: { title: '改' } }),
    expect: write(200),
  },
  {
    route: 'PATCH /projects/:projectId',
    request: (w) => ({ path: P(w), body: { archived: true } }),
    expect: ownerOnly(200),
  },
  { route: 'DELETE /projects/:projectId', request: (w) => ({ path: P(w) }), expect: ownerOnly(204) },
  {
    route: 'POST /projects/:projectId/restore',
    request: (w) => ({ path: `${P(w)}/restore` }),
    expect: ownerOnly(200),
  },
  { route: 'GET /projects/:projectId/notes', request: (w) => ({ path: `${P(w)}/notes` }), expect: read },
  {
    route: 'PUT /projects/:projectId/notes',
    request: (w) => ({ path: `${P(w)}/notes`, body: { notes: '记', expected_version: 0 } }),
    expect: write(200),
  },
  { route: 'GET /projects/:projectId/info', request: (w) => ({ path: `${P(w)}/info` }), expect: read },
  {
    route: 'PUT /projects/:projectId/info',
    request: (w) => ({ path: `${P(w)}/info`, body: { info: { genre: '悬疑' }, expected_version: 0 } }),
    expect: write(200),
  },
  {
    route: 'GET /projects/:projectId/task-board',
    request: (w) => ({ path: `${P(w)}/task-board` }),
    expect: read,
  },
  {
    route: 'PUT /projects/:projectId/task-board',
    request: (w) => ({
      path: `${P(w)}/task-board`,
      body: { tasks: [{ id: 't1', title: '大纲', status: 'todo' }], expected_version: 0 },
    }),
    expect: write(200),
  },
  { route: 'GET /projects/:projectId/commits', request: (w) => ({ path: `${P(w)}/commits` }), expect: read },
  {
    route: 'GET /projects/:projectId/sessions',
    request: (w) => ({ path: `${P(w)}/sessions` }),
    expect: read,
  },
  { route: 'GET /projects/:projectId/members', request: (w) => ({ path: `${P(w)}/members` }), expect: read },
  {
    route: 'POST /projects/:projectId/members',
    request: (w) => ({ path: `${P(w)}/members`, body: { user_id: w.newcomerId, role: 'viewer' } }),
    expect: ownerOnly(201),
  },
  {
    route: 'PATCH /projects/:projectId/members/:userId',
    request: (w) => ({ path: `${P(w)}/members/${w.extraId}`, body: { role: 'editor' } }),
    expect: ownerOnly(200),
  },
  {
    route: 'DELETE /projects/:projectId/members/:userId',
    request: (w) => ({ path: `${P(w)}/members/${w.extraId}` }),
    expect: ownerOnly(204),
  },
  { route: 'GET /projects/:projectId/files', request: (w) => ({ path: `${P(w)}/files` }), expect: read },
  {
    route: 'POST /projects/:projectId/files',
    request: (w) => ({ path: `${P(w)}/files`, body: { title: '设定', file_type: 'setting' } }),
    expect: write(201),
  },
  { route: 'GET /projects/:projectId/files/:fileId', request: (w) => ({ path: F(w) }), expect: read },
  {
    route: 'PUT /projects/:projectId/files/:fileId',
    request: (w) => ({ path: F(w), body: { content: '雨夜。', expected_version: 1 } }),
    expect: write(200),
  },
  {
    route: 'DELETE /projects/:projectId/files/:fileId',
    request: (w) => ({ path: F(w) }),
    expect: write(204),
  },
  {
    route: 'GET /projects/:projectId/files/:fileId/versions',
    request: (w) => ({ path: `${F(w)}/versions` }),
    expect: read,
  },
  {
    route: 'GET /projects/:projectId/files/:fileId/versions/:version',
    request: (w) => ({ path: `${F(w)}/versions/1` }),
    expect: read,
  },
  {
    route: 'POST /projects/:projectId/files/:fileId/revert',
    request: (w) => ({ path: `${F(w)}/revert`, body: { version: 1 } }),
    expect: write(200),
  },
  {
    route: 'POST /projects/:projectId/files/:fileId/accept-draft',
    request: (w) => ({ path: `${P(w)}/files/${w.draftId}/accept-draft`, body: { expected_version: 1 } }),
    expect: write(200),
  },
  {
    route: 'PUT /projects/:projectId/files/:fileId/visibility',
    request: (w) => ({ path: `${F(w)}/visibility`, body: { visibility: 'author_only' } }),
    expect: write(200),
  },
  {
    route: 'GET /projects/:projectId/artifacts',
    request: (w) => ({ path: `${P(w)}/artifacts?state=open` }),
    expect: read,
  },
  {
    route: 'GET /agent/runs/:runId/artifacts',
    request: (w) => ({ path: `/agent/runs/${w.runId}/artifacts` }),
    expect: ownItem(200),
  },
  {
    route: 'POST /projects/:projectId/artifacts/:artifactId/accept',
    request: (w) => ({ path: `${P(w)}/artifacts/${w.artifactId}/accept`, body: {} }),
    expect: write(200),
  },
  {
    route: 'POST /projects/:projectId/artifacts/:artifactId/reject',
    request: (w) => ({ path: `${P(w)}/artifacts/${w.artifactId}/reject`, body: { comment: '不要' } }),
    expect: write(200),
  },
  {
    route: 'GET /projects/:projectId/settings',
    request: (w) => ({ path: `${P(w)}/settings` }),
    expect: read,
  },
  {
    route: 'PUT /projects/:projectId/settings',
    request: (w) => ({ path: `${P(w)}/settings`, body: { artifact_acceptance: 'auto' } }),
    expect: write(200),
  },
  {
    route: 'GET /sessions/:sessionId/definitions',
    request: (w) => ({ path: `/sessions/${w.sessionId}/definitions` }),
    expect: ownItem(200),
  },
  {
    route: 'POST /sessions/:sessionId/definitions/upgrade',
    request: (w) => ({ path: `/sessions/${w.sessionId}/definitions/upgrade` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId',
    request: (w) => ({ path: `/sessions/${w.sessionId}` }),
    expect: ownItem(200),
  },
  {
    route: 'PATCH /sessions/:sessionId',
    request: (w) => ({ path: `/sessions/${w.sessionId}`, body: { title: '改名' } }),
    expect: ownItem(200),
  },
  {
    route: 'DELETE /sessions/:sessionId',
    request: (w) => ({ path: `/sessions/${w.sessionId}` }),
    expect: ownItem(204),
  },
  {
    route: 'GET /sessions/:sessionId/messages',
    request: (w) => ({ path: `/sessions/${w.sessionId}/messages` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId/runs',
    request: (w) => ({ path: `/sessions/${w.sessionId}/runs` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /agent/runs/:runId',
    request: (w) => ({ path: `/agent/runs/${w.runId}` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /agent/runs/:runId/events',
    request: (w) => ({ path: `/agent/runs/${w.runId}/events` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /agent/runs/:runId/context-trace',
    request: (w) => ({ path: `/agent/runs/${w.runId}/context-trace` }),
    expect: ownItem(200),
  },
  { route: 'GET /projects/:projectId/export', request: (w) => ({ path: `${P(w)}/export` }), expect: read },
  {
    route: 'GET /projects/:projectId/manuscript.md',
    request: (w) => ({ path: `${P(w)}/manuscript.md` }),
    expect: read,
  },
  {
    route: 'GET /projects/:projectId/snapshots',
    request: (w) => ({ path: `${P(w)}/snapshots` }),
    expect: read,
  },
  {
    route: 'POST /projects/:projectId/snapshots',
    request: (w) => ({ path: `${P(w)}/snapshots`, body: { label: '手动' } }),
    expect: write(201),
  },
  {
    route: 'GET /projects/:projectId/snapshots/:snapshotId',
    request: (w) => ({ path: `${P(w)}/snapshots/${w.snapshotId}` }),
    expect: read,
  },
  {
    route: 'GET /projects/:projectId/snapshots/:snapshotId/diff',
    request: (w) => ({ path: `${P(w)}/snapshots/${w.snapshotId}/diff` }),
    expect: read,
  },
  {
    route: 'POST /projects/:projectId/snapshots/:snapshotId/restore',
    request: (w) => ({ path: `${P(w)}/snapshots/${w.snapshotId}/restore`, body: {} }),
    expect: write(200),
  },
  {
    route: 'POST /agent/runs/:runId/undo',
    request: (w) => ({ path: `/agent/runs/${w.runId}/undo`, body: {} }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId/branches',
    request: (w) => ({ path: `/sessions/${w.sessionId}/branches` }),
    expect: ownItem(200),
  },
  {
    route: 'POST /sessions/:sessionId/branches',
    request: (w) => ({ path: `/sessions/${w.sessionId}/branches`, body: {} }),
    expect: ownItem(201),
  },
  {
    route: 'POST /sessions/:sessionId/branches/:branchId/activate',
    request: (w) => ({ path: `/sessions/${w.sessionId}/branches/${w.branchId}/activate`, body: {} }),
    expect: ownItem(200),
  },
  { route: 'GET /me', request: () => ({ path: '/me' }), expect: all(200) },
  { route: 'GET /me/api-keys', request: () => ({ path: '/me/api-keys' }), expect: all(200) },
  {
    route: 'POST /me/api-keys',
    request: () => ({ path: '/me/api-keys', body: { name: 'k' } }),
    expect: all(201),
  },
  {
    route: 'DELETE /me/api-keys/:keyId',
    request: (w) => ({ path: `/me/api-keys/${w.ownerKeyId}` }),
    expect: ownItem(204),
  },
  {
    route: 'POST /admin/users',
    request: () => ({
      path: '/admin/users',
      body: { email: `u-${crypto.randomUUID()}@example.com`, display_name: 'u' },
    }),
    expect: all(403),
  },
  {
    route: 'POST /admin/users/:userId/credits',
    request: (w) => ({ path: `/admin/users/${w.newcomerId}/credits`, body: { credits: 5 } }),
    expect: all(403),
  },
  { route: 'GET /usage/today', request: () => ({ path: '/usage/today' }), expect: all(200) },
  { route: 'GET /quota', request: () => ({ path: '/quota' }), expect: all(200) },
  { route: 'GET /skills', request: () => ({ path: '/skills' }), expect: all(200) },
];

/** Routes whose access rules are tested elsewhere, and where. */
const ELSEWHERE: Record<string, string> = {
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

describe('ACL: every route × owner / editor / viewer / stranger', () => {
  it('covers every route of the route table', () => {
    const covered = new Set([...CASES.map((entry) => entry.route), ...Object.keys(ELSEWHERE)]);
    const routes = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(routes.filter((route) => !covered.has(route))).toEqual([]);
    expect([...covered].filter((route) => !routes.includes(route))).toEqual([]);
  });

  it.each(
    CASES.map(
      (entry) =>
        [`${entry.route} ${JSON.stringify(entry.request(placeholder()).body ?? '')}`, entry] as const,
    ),
  )('%s', async (_label, entry) => {
    const method = entry.route.split(' ')[0]!;
    const got: Record<string, number> = {};
    for (const role of ROLES) {
      const { path, body } = entry.request(await world());
      const reply = await people[role].call(method, path, body);
      got[role] = reply.status;
      // A success answers with the body the route table (and so the OpenAPI document) promises.
      const declared = API_ROUTES.find((route) => `${route.method} ${route.path}` === entry.route)!.success;
      if (reply.status === declared.status && declared.body) {
        const parsed = declared.body.safeParse(reply.body);
        expect(parsed.success, `${role} ${method} ${path}: ${parsed.error?.message}`).toBe(true);
      }
      if (reply.status >= 400)
        expect(reply.body.error.code, `${role} ${method} ${path}`).toBeTypeOf('string');
    }
    expect(got).toEqual(entry.expect);
  });
});

function placeholder(): World {
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
