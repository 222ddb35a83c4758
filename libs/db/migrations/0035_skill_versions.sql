-- Skill versions (docs/kernel.md "Definitions and pinning"): an author's skill edit is a new
-- version, old versions are kept; a session pins the versions it runs with, so an edit reaches
-- new sessions only, or a session the author upgrades.
ALTER TABLE skills ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1;

-- Every version's whole package (SKILL.md body, front matter, resources), never rewritten.
CREATE TABLE IF NOT EXISTS skill_versions (
  skill_id uuid NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  content_hash text NOT NULL,
  description text NOT NULL,
  content text NOT NULL,
  metadata jsonb NOT NULL,
  -- [{path, content, bytes}] by path.
  resources jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (skill_id, version)
);

-- The skills as they stand become their version 1.
INSERT INTO skill_versions (skill_id, version, content_hash, description, content, metadata, resources)
SELECT s.id, s.version, 'migrated', s.description, s.content, s.metadata,
  COALESCE((SELECT jsonb_agg(jsonb_build_object('path', r.path, 'content', r.content, 'bytes', r.bytes)
                             ORDER BY r.path)
            FROM skill_resources r WHERE r.skill_id = s.id), '[]'::jsonb)
FROM skills s
ON CONFLICT (skill_id, version) DO NOTHING;

-- What a session runs with: pinned at its runs' launches for skills it has no pin for yet.
CREATE TABLE IF NOT EXISTS session_skill_pins (
  session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  skill_id uuid NOT NULL,
  version integer NOT NULL,
  pinned_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, skill_id),
  FOREIGN KEY (skill_id, version) REFERENCES skill_versions (skill_id, version) ON DELETE CASCADE
);

-- The skill versions one run reads (its launch fixes them): the compiler and the skill tools
-- read through these rows, and GET /agent/runs/:runId names them.
CREATE TABLE IF NOT EXISTS run_skill_versions (
  run_id uuid NOT NULL,
  skill_id uuid NOT NULL,
  name text NOT NULL,
  version integer NOT NULL,
  PRIMARY KEY (run_id, skill_id),
  FOREIGN KEY (skill_id, version) REFERENCES skill_versions (skill_id, version) ON DELETE CASCADE
);
