-- Definitions and pinning (docs/kernel.md "Definitions and pinning"): a role's definition (its
-- prompt, tool set, model and budget settings) is a versioned record seeded from the code at
-- start-up by content hash; a session pins the versions it started with.
CREATE TABLE IF NOT EXISTS role_definitions (
  role text NOT NULL,
  version integer NOT NULL,
  content_hash text NOT NULL,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set each time a service starts with this content: the newest is the role's current version.
  current_since timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (role, version),
  UNIQUE (role, content_hash)
);

-- What a session runs with; a deploy changes nothing here until an explicit upgrade.
CREATE TABLE IF NOT EXISTS session_definition_pins (
  session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  role text NOT NULL,
  version integer NOT NULL,
  pinned_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, role),
  FOREIGN KEY (role, version) REFERENCES role_definitions (role, version)
);

-- What each run actually used (a session may be upgraded later; its old runs keep their record).
CREATE TABLE IF NOT EXISTS run_definitions (
  run_id uuid NOT NULL,
  role text NOT NULL,
  version integer NOT NULL,
  PRIMARY KEY (run_id, role),
  FOREIGN KEY (role, version) REFERENCES role_definitions (role, version)
);
