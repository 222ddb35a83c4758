-- Quill initial schema. Timestamps are timestamptz (microseconds, seed 003 坑 8); ids are uuids.
-- Columns written many times inside one transaction (messages, versions) default to
-- clock_timestamp() so rows written in the same transaction still order by time.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL UNIQUE,
  display_name text NOT NULL,
  role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- sha256 hex of the bearer key; the key itself is never stored.
  key_hash text NOT NULL UNIQUE,
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);

CREATE TABLE projects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title text NOT NULL,
  project_type text NOT NULL DEFAULT 'novel',
  notes text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_owner_idx ON projects (owner_id);

CREATE TABLE project_members (
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user_idx ON project_members (user_id);

CREATE TABLE files (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  folder text NOT NULL DEFAULT '',
  title text NOT NULL,
  -- e.g. draft, outline, character, setting, note, script; open-ended on purpose.
  file_type text NOT NULL,
  content text NOT NULL DEFAULT '',
  version integer NOT NULL DEFAULT 0,
  author_saved boolean NOT NULL DEFAULT false,
  deleted boolean NOT NULL DEFAULT false,
  visibility text NOT NULL DEFAULT 'all',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX files_project_idx ON files (project_id) WHERE NOT deleted;
-- Trigram indexes serve the project full-text search tool (substring matches in Chinese text).
CREATE INDEX files_title_trgm_idx ON files USING gin (title gin_trgm_ops);
CREATE INDEX files_content_trgm_idx ON files USING gin (content gin_trgm_ops);

CREATE TABLE file_versions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  file_id uuid NOT NULL REFERENCES files (id) ON DELETE CASCADE,
  version integer NOT NULL,
  content text NOT NULL,
  source text NOT NULL CHECK (source IN ('author', 'ai')),
  run_id uuid,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (file_id, version)
);

CREATE TABLE sessions (
  -- The only thread id (seed 003 invariant 1).
  session_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title text NOT NULL DEFAULT '',
  phase text NOT NULL DEFAULT 'idle' CHECK (phase IN ('idle', 'running', 'waiting_user', 'done', 'error')),
  clarification_pending boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_project_user_idx ON sessions (project_id, user_id, updated_at DESC);

CREATE TABLE messages (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Tie-breaker for messages stamped in the same microsecond.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  run_id uuid,
  role text NOT NULL CHECK (role IN ('user', 'assistant')),
  content text NOT NULL,
  routing jsonb,
  breadcrumbs jsonb,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX messages_session_created_idx ON messages (session_id, created_at, seq);

CREATE TABLE runs (
  run_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  phase text NOT NULL DEFAULT 'running' CHECK (phase IN ('idle', 'running', 'waiting_user', 'done', 'error')),
  stop_reason text,
  error_code text,
  billing_decision text CHECK (billing_decision IN ('charge', 'refund')),
  -- Fencing token: bumped when a router takes a run over; writes from older epochs are refused.
  epoch integer NOT NULL DEFAULT 0,
  generation_mode text NOT NULL CHECK (generation_mode IN ('fast', 'quality')),
  model_calls integer NOT NULL DEFAULT 0,
  tool_calls integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);
CREATE INDEX runs_session_idx ON runs (session_id);
CREATE INDEX runs_user_created_idx ON runs (user_id, created_at);

-- Usage is a ledger: no foreign keys, so a late usage report is never lost to ordering.
CREATE TABLE usage_records (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_id uuid NOT NULL,
  user_id uuid NOT NULL,
  call_index integer NOT NULL,
  attempt integer NOT NULL,
  role text NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  prompt_tokens integer NOT NULL,
  completion_tokens integer NOT NULL,
  total_tokens integer NOT NULL,
  usage_source text NOT NULL CHECK (usage_source IN ('provider', 'estimate')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_id, call_index, attempt)
);
CREATE INDEX usage_records_user_created_idx ON usage_records (user_id, created_at);

CREATE TABLE quota_accounts (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  credits integer NOT NULL CHECK (credits >= 0),
  daily_token_cap integer CHECK (daily_token_cap >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Credit movements. One reservation per run; the settlement row below decides charge or refund.
CREATE TABLE billing_ledger (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_id uuid NOT NULL,
  user_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('reserve', 'charge', 'refund')),
  -- Signed change to the balance: reserve -n, refund +n, charge 0 (the reservation is kept).
  credits_delta integer NOT NULL,
  reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_id, kind)
);
CREATE INDEX billing_ledger_user_created_idx ON billing_ledger (user_id, created_at);

-- Exactly one settlement per run: the primary key makes a retried settle a no-op.
CREATE TABLE settlements (
  run_id uuid PRIMARY KEY,
  user_id uuid NOT NULL,
  decision text NOT NULL CHECK (decision IN ('charge', 'refund')),
  reason text NOT NULL,
  credits_refunded integer NOT NULL DEFAULT 0 CHECK (credits_refunded >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE skills (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  content text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (owner_id, name)
);

CREATE TABLE context_traces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_id uuid NOT NULL,
  role text NOT NULL,
  step integer NOT NULL,
  trace jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX context_traces_run_idx ON context_traces (run_id, step);

CREATE TABLE snapshots (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  label text NOT NULL DEFAULT '',
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX snapshots_project_idx ON snapshots (project_id, created_at);
