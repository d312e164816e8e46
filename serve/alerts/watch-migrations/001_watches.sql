-- Watches on PostgreSQL (serve/alerts/pg-watch-store.ts): every replica's routes write them and
-- every replica's evaluation reads them. No signing secret is stored (watch-secret.ts derives it).

CREATE TABLE alerts.watches (
  id             text PRIMARY KEY,
  account_id     text NOT NULL,
  name           text,
  target         jsonb NOT NULL,
  windows        text[] NOT NULL,
  conditions     jsonb NOT NULL,
  url            text NOT NULL,
  created_at     timestamptz NOT NULL,
  secret_version integer NOT NULL,
  paused         jsonb
);
CREATE INDEX watches_account ON alerts.watches (account_id, created_at, id);
