import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  all,
  type Case,
  caseLabel,
  expectCase,
  expectPartCovered,
  F,
  newPeople,
  ownerOnly,
  P,
  type People,
  read,
  write,
} from '../support/acl-world.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * The project ACL of every `/projects` route (README "HTTP API"): what an owner, an editor, a viewer and a stranger get, each request
 * against a fresh project (test/support/acl-world.ts).
 */
let stack: Stack;
let people: People;

beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  people = await newPeople(stack);
});
afterAll(async () => {
  await stack?.stop();
});

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
];

describe('ACL: every /projects route × owner / editor / viewer / stranger', () => {
  it('covers every route of the route table under /projects', () => {
    expectPartCovered('projects', CASES);
  });

  it.each(CASES.map(caseLabel))('%s', async (_label, entry) => {
    await expectCase(stack, people, entry);
  });
});
