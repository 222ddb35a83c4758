import { createQuillClient, QuillApiError } from '@quill/client';
import type {
  Artifact,
  FileVersion,
  HistoryMessage,
  Member,
  Project,
  ProjectFile,
  Quota,
  Session,
} from './types.ts';

export { QuillApiError };

/**
 * Everything the app asks of the gateway. Runs, stop/steer, quota and suggestions go through the
 * typed client (libs/client); the rest are plain JSON calls on the same origin, and every refusal
 * is a `QuillApiError` carrying the catalog code, so screens explain it in words (errors.ts).
 */
export function createApi(token: string) {
  const client = createQuillClient({ baseUrl: window.location.origin, token });
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.status === 204) return undefined as T;
    const parsed = await response.json().catch(() => undefined);
    if (!response.ok) throw new QuillApiError(response.status, parsed);
    return parsed as T;
  };
  const files = (projectId: string) => `/projects/${projectId}/files`;

  return {
    client,
    quota: () => call<Quota>('GET', '/quota'),
    projects: {
      list: () => call<{ projects: Project[] }>('GET', '/projects?limit=100'),
      get: (projectId: string) => call<{ project: Project }>('GET', `/projects/${projectId}`),
      create: (title: string, language: 'zh' | 'en') =>
        call<{ project: Project }>('POST', '/projects', { title, language }),
      update: (projectId: string, changes: { title?: string; archived?: boolean }) =>
        call<{ project: Project }>('PATCH', `/projects/${projectId}`, changes),
      members: (projectId: string) => call<{ members: Member[] }>('GET', `/projects/${projectId}/members`),
      addMember: (projectId: string, email: string, role: 'editor' | 'viewer') =>
        call<{ member: Member }>('POST', `/projects/${projectId}/members`, { email, role }),
      removeMember: (projectId: string, userId: string) =>
        call<void>('DELETE', `/projects/${projectId}/members/${userId}`),
    },
    artifacts: {
      open: (projectId: string) =>
        call<{ artifacts: Artifact[] }>('GET', `/projects/${projectId}/artifacts?state=open`),
      accept: (projectId: string, artifactId: string, expectedVersion?: number) =>
        call<{ artifact: Artifact }>(
          'POST',
          `/projects/${projectId}/artifacts/${artifactId}/accept`,
          expectedVersion === undefined ? {} : { expected_version: expectedVersion },
        ),
      reject: (projectId: string, artifactId: string) =>
        call<{ artifact: Artifact }>('POST', `/projects/${projectId}/artifacts/${artifactId}/reject`, {}),
      requestRevision: (projectId: string, artifactId: string, comment: string) =>
        call<{ artifact: Artifact; run_id: string; session_id: string }>(
          'POST',
          `/projects/${projectId}/artifacts/${artifactId}/request-revision`,
          { comment },
        ),
    },
    runs: {
      undo: (runId: string) =>
        call<{ files: Array<{ file_id: string; title: string; action: string }> }>(
          'POST',
          `/agent/runs/${runId}/undo`,
          {},
        ),
    },
    sessions: {
      regenerate: (sessionId: string, language: 'zh' | 'en') =>
        call<{ run_id: string; session_id: string }>('POST', `/sessions/${sessionId}/regenerate`, {
          ui_language: language,
        }),
      list: (projectId: string) =>
        call<{ sessions: Session[] }>('GET', `/projects/${projectId}/sessions?limit=50`),
      messages: (sessionId: string) =>
        call<{ messages: HistoryMessage[] }>('GET', `/sessions/${sessionId}/messages?limit=100`),
    },
    files: {
      list: (projectId: string) => call<{ files: ProjectFile[] }>('GET', files(projectId)),
      get: (projectId: string, fileId: string) =>
        call<{ file: ProjectFile }>('GET', `${files(projectId)}/${fileId}`),
      create: (projectId: string, title: string, fileType: string) =>
        call<{ file: ProjectFile }>('POST', files(projectId), { title, file_type: fileType }),
      save: (projectId: string, fileId: string, content: string, expectedVersion: number) =>
        call<{ file: ProjectFile }>('PUT', `${files(projectId)}/${fileId}`, {
          content,
          expected_version: expectedVersion,
        }),
      versions: (projectId: string, fileId: string) =>
        call<{ versions: FileVersion[] }>('GET', `${files(projectId)}/${fileId}/versions`),
      version: (projectId: string, fileId: string, version: number) =>
        call<{ version: FileVersion & { content: string } }>(
          'GET',
          `${files(projectId)}/${fileId}/versions/${version}`,
        ),
      revert: (projectId: string, fileId: string, version: number, expectedVersion: number) =>
        call<{ file: ProjectFile }>('POST', `${files(projectId)}/${fileId}/revert`, {
          version,
          expected_version: expectedVersion,
        }),
      acceptDraft: (projectId: string, draftId: string, expectedVersion: number) =>
        call<{ file: ProjectFile }>('POST', `${files(projectId)}/${draftId}/accept-draft`, {
          expected_version: expectedVersion,
        }),
    },
  };
}

export type Api = ReturnType<typeof createApi>;

/** True when this gateway has no such route yet (the product API lands separately). */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof QuillApiError && (error.status === 404 || error.status === 405);
}
