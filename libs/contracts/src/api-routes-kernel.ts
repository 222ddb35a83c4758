import { type ApiRoute, ok, route } from './api-route.ts';
import { ProjectIdParams, RunIdParams, SessionIdParams } from './http.ts';
import {
  BranchListResponse,
  BranchSwitchResponse,
  CreateBranchBody,
  CreateSnapshotBody,
  ListSnapshotsQuery,
  ProjectSnapshotParams,
  RegenerateBody,
  RegenerateResponse,
  RestoreBody,
  RestoreResponse,
  SessionBranchParams,
  SnapshotDiffQuery,
  SnapshotDiffResponse,
  SnapshotListResponse,
  SnapshotResponse,
} from './snapshots.ts';
import {
  ProjectInfoBody,
  ProjectInfoResponse,
  StateCommitsQuery,
  StateCommitsResponse,
  TaskBoardBody,
  TaskBoardResponse,
} from './state-commits.ts';

/** Snapshots, undo and branches (README "Snapshots, undo and branches", docs/kernel.md). */
export const KERNEL_ROUTES: readonly ApiRoute[] = [
  route('GET', '/projects/:projectId/snapshots', "The project's snapshots, newest first", {
    params: ProjectIdParams,
    query: ListSnapshotsQuery,
    success: ok(SnapshotListResponse),
  }),
  route('POST', '/projects/:projectId/snapshots', "Take a snapshot of the project's files and notes", {
    params: ProjectIdParams,
    body: CreateSnapshotBody,
    success: { status: 201, body: SnapshotResponse },
  }),
  route('GET', '/projects/:projectId/snapshots/:snapshotId', 'One snapshot with its file list', {
    params: ProjectSnapshotParams,
    success: ok(SnapshotResponse),
  }),
  route('GET', '/projects/:projectId/snapshots/:snapshotId/diff', 'A snapshot against another or now', {
    params: ProjectSnapshotParams,
    query: SnapshotDiffQuery,
    success: ok(SnapshotDiffResponse),
  }),
  route(
    'POST',
    '/projects/:projectId/snapshots/:snapshotId/restore',
    'Restore a snapshot (as new versions)',
    {
      params: ProjectSnapshotParams,
      body: RestoreBody,
      success: ok(RestoreResponse),
    },
  ),
  route('POST', '/agent/runs/:runId/undo', 'Undo everything a run did to files and notes', {
    params: RunIdParams,
    body: RestoreBody,
    success: ok(RestoreResponse),
  }),
  route('GET', '/sessions/:sessionId/branches', "A session's branches (alternatives)", {
    params: SessionIdParams,
    success: ok(BranchListResponse),
  }),
  route('POST', '/sessions/:sessionId/branches', 'Branch the session after a message and switch to it', {
    params: SessionIdParams,
    body: CreateBranchBody,
    success: { status: 201, body: BranchSwitchResponse },
  }),
  route('POST', '/sessions/:sessionId/branches/:branchId/activate', 'Switch to a branch (files follow)', {
    params: SessionBranchParams,
    body: RestoreBody,
    success: ok(BranchSwitchResponse),
  }),
  route('GET', '/projects/:projectId/info', "The project's info and its rev", {
    params: ProjectIdParams,
    success: ok(ProjectInfoResponse),
  }),
  route('PUT', '/projects/:projectId/info', 'Commit the info with rev (merged per key or 409)', {
    params: ProjectIdParams,
    body: ProjectInfoBody,
    success: ok(ProjectInfoResponse),
  }),
  route('GET', '/projects/:projectId/task-board', "The project's task board and its rev", {
    params: ProjectIdParams,
    success: ok(TaskBoardResponse),
  }),
  route('PUT', '/projects/:projectId/task-board', 'Commit the task board with rev (merged per task or 409)', {
    params: ProjectIdParams,
    body: TaskBoardBody,
    success: ok(TaskBoardResponse),
  }),
  route('GET', '/projects/:projectId/commits', 'The commit log of notes, info and task board', {
    params: ProjectIdParams,
    query: StateCommitsQuery,
    success: ok(StateCommitsResponse),
  }),
  route('POST', '/sessions/:sessionId/regenerate', 'Regenerate the last reply on a new branch', {
    params: SessionIdParams,
    body: RegenerateBody,
    success: { status: 201, body: RegenerateResponse },
  }),
];
