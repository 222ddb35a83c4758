import { z } from 'zod';
import { int4, storableText } from './text.ts';

/**
 * Artifacts and acceptance, definitions and commits (docs/kernel.md): the HTTP bodies of the
 * runtime kernel's records.
 */
export const ArtifactState = z.enum([
  'drafted',
  'under_review',
  'accepted',
  'rejected',
  'revision_requested',
  'superseded',
]);
export const ArtifactAcceptance = z.enum(['auto', 'review']);

export const ProjectArtifactParams = z.object({ projectId: z.uuid(), artifactId: z.uuid() });
export const ArtifactListQuery = z.strictObject({
  state: z.enum(['open', 'all']).default('all'),
});

export const ArtifactView = z.object({
  id: z.string(),
  project_id: z.string(),
  run_id: z.string().nullable(),
  step: z.number().int().nullable(),
  /** The file the artifact is for (the original of a draft). */
  file_id: z.string().nullable(),
  /** Where the text is: the file itself (`in_file`) or its `（AI 草稿）` draft. */
  text_file_id: z.string(),
  placement: z.enum(['in_file', 'draft']),
  version: z.number().int(),
  base_version: z.number().int().nullable(),
  state: ArtifactState,
  decided_by: z.string().nullable(),
  comment: z.string().nullable(),
  findings: z.array(
    z.object({
      run_id: z.string(),
      step: z.number().int(),
      role: z.string(),
      text: z.string(),
      at: z.string(),
    }),
  ),
  revision_run_id: z.string().nullable(),
  created_at: z.string(),
  decided_at: z.string().nullable(),
});
export type ArtifactView = z.infer<typeof ArtifactView>;

export const ArtifactListResponse = z.object({ artifacts: z.array(ArtifactView) });
export const RunArtifactsResponse = z.object({
  artifacts: z.array(ArtifactView),
  /** The run left artifacts waiting for the author's decision. */
  awaiting_acceptance: z.boolean(),
});

/** Accept: for an in-file artifact optional; for a draft, the original's version the author saw. */
export const AcceptArtifactBody = z.strictObject({ expected_version: int4().nonnegative().optional() });
export const RejectArtifactBody = z.strictObject({ comment: storableText().trim().max(2000).optional() });
export const RequestRevisionBody = z.strictObject({ comment: storableText().trim().min(1).max(2000) });
export const ArtifactDecisionResponse = z.object({ artifact: ArtifactView });
export const RevisionResponse = z.object({
  artifact: ArtifactView,
  /** The revision run; follow it with GET /agent/runs/:runId/stream. */
  run_id: z.string(),
  session_id: z.string(),
});

export const ProjectSettingsBody = z.strictObject({ artifact_acceptance: ArtifactAcceptance });
export const ProjectSettingsResponse = z.object({ artifact_acceptance: ArtifactAcceptance });

/** A run's definitions: role → the version it ran with. */
export const RunDefinitions = z.record(z.string(), z.number().int());
export const SessionDefinitionsResponse = z.object({
  /** What the session is pinned to. */
  pinned: RunDefinitions,
  /** What a new session would get (the newest deployed versions). */
  current: RunDefinitions,
});
