-- Usage per API key (README "HTTP API", GET /me/api-keys): the key a run was started with. Null
-- for runs started with an access token or an identity provider's token; no foreign key, so
-- revoking or deleting a key never touches the run history.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS api_key_id uuid;
CREATE INDEX IF NOT EXISTS runs_api_key_idx ON runs (api_key_id) WHERE api_key_id IS NOT NULL;
