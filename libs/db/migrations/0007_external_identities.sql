-- Users who sign in through an external identity provider (AUTH_JWKS_URL): one row per
-- provider account. The provider's (iss, sub) is the identity; a first sign-in creates the user.
-- Accounts are never linked by e-mail, which a provider may not have verified.
CREATE TABLE IF NOT EXISTS external_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX IF NOT EXISTS external_identities_user ON external_identities (user_id);
