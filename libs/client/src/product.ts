import {
  type AddMemberBody,
  ApiKeyListResponse,
  CreatedApiKeyResponse,
  type CreateProjectBody,
  type CreateUserBody,
  MemberListResponse,
  MemberResponse,
  MessageListResponse,
  ProjectListResponse,
  ProjectNotesResponse,
  ProjectResponse,
  RunListResponse,
  SessionListResponse,
  SessionReadResponse,
  SessionResponse,
  type UpdateProjectBody,
  UserResponse,
} from '@quill/contracts';
import type { z } from 'zod';
import { QuillApiError } from './errors.ts';

type Json = <S extends z.ZodType>(
  schema: S,
  method: string,
  path: string,
  body?: unknown,
) => Promise<z.infer<S>>;
type Send = (method: string, path: string, body?: unknown, init?: RequestInit) => Promise<Response>;
export interface PageOptions {
  limit?: number;
  cursor?: string;
}

const query = (options: { [key: string]: string | number | boolean | undefined }) => {
  const entries = Object.entries(options).flatMap(
    ([key, value]): Array<[string, string]> => (value === undefined ? [] : [[key, String(value)]]),
  );
  return entries.length ? `?${new URLSearchParams(entries)}` : '';
};

/** The product API (README "HTTP API"): projects, notes, sessions and history, members, keys. */
export function productMethods(json: Json, send: Send) {
  const noContent = async (method: string, path: string) => {
    const response = await send(method, path);
    if (!response.ok) throw new QuillApiError(response.status, await response.json().catch(() => undefined));
  };
  const bytes = async (path: string) => {
    const response = await send('GET', path);
    if (!response.ok) throw new QuillApiError(response.status, await response.json().catch(() => undefined));
    return new Uint8Array(await response.arrayBuffer());
  };
  return {
    projects: {
      list: (options: PageOptions & { archived?: boolean } = {}) =>
        json(ProjectListResponse, 'GET', `/projects${query({ ...options })}`),
      create: (body: z.input<typeof CreateProjectBody>) => json(ProjectResponse, 'POST', '/projects', body),
      get: (projectId: string) => json(ProjectResponse, 'GET', `/projects/${projectId}`),
      update: (projectId: string, body: UpdateProjectBody) =>
        json(ProjectResponse, 'PATCH', `/projects/${projectId}`, body),
      delete: (projectId: string) => noContent('DELETE', `/projects/${projectId}`),
      restore: (projectId: string) => json(ProjectResponse, 'POST', `/projects/${projectId}/restore`),
      notes: (projectId: string) => json(ProjectNotesResponse, 'GET', `/projects/${projectId}/notes`),
      saveNotes: (projectId: string, notes: string, expectedVersion: number) =>
        json(ProjectNotesResponse, 'PUT', `/projects/${projectId}/notes`, {
          notes,
          expected_version: expectedVersion,
        }),
      sessions: (projectId: string, options: PageOptions = {}) =>
        json(SessionListResponse, 'GET', `/projects/${projectId}/sessions${query({ ...options })}`),
      members: (projectId: string) => json(MemberListResponse, 'GET', `/projects/${projectId}/members`),
      addMember: (projectId: string, body: AddMemberBody) =>
        json(MemberResponse, 'POST', `/projects/${projectId}/members`, body),
      setMemberRole: (projectId: string, userId: string, role: 'editor' | 'viewer') =>
        json(MemberResponse, 'PATCH', `/projects/${projectId}/members/${userId}`, { role }),
      removeMember: (projectId: string, userId: string) =>
        noContent('DELETE', `/projects/${projectId}/members/${userId}`),
      /** The project zip. */
      export: (projectId: string) => bytes(`/projects/${projectId}/export`),
      manuscript: async (projectId: string) =>
        new TextDecoder().decode(await bytes(`/projects/${projectId}/manuscript.md`)),
      import: async (zip: Uint8Array<ArrayBuffer>) => {
        const response = await send('POST', '/projects/import', undefined, {
          body: zip,
          headers: { 'content-type': 'application/zip' },
        });
        const parsed = await response.json().catch(() => undefined);
        if (!response.ok) throw new QuillApiError(response.status, parsed);
        return ProjectResponse.parse(parsed);
      },
    },
    sessions: {
      get: (sessionId: string) => json(SessionReadResponse, 'GET', `/sessions/${sessionId}`),
      rename: (sessionId: string, title: string) =>
        json(SessionResponse, 'PATCH', `/sessions/${sessionId}`, { title }),
      delete: (sessionId: string) => noContent('DELETE', `/sessions/${sessionId}`),
      messages: (sessionId: string, options: PageOptions = {}) =>
        json(MessageListResponse, 'GET', `/sessions/${sessionId}/messages${query({ ...options })}`),
      runs: (sessionId: string, options: PageOptions = {}) =>
        json(RunListResponse, 'GET', `/sessions/${sessionId}/runs${query({ ...options })}`),
    },
    me: {
      get: () => json(UserResponse, 'GET', '/me'),
      apiKeys: () => json(ApiKeyListResponse, 'GET', '/me/api-keys'),
      createApiKey: (name: string) => json(CreatedApiKeyResponse, 'POST', '/me/api-keys', { name }),
      revokeApiKey: (keyId: string) => noContent('DELETE', `/me/api-keys/${keyId}`),
    },
    admin: {
      createUser: (body: z.input<typeof CreateUserBody>) => json(UserResponse, 'POST', '/admin/users', body),
    },
  };
}
