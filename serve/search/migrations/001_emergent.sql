-- Emergent narratives shared by the API replicas (serve/search/emergent-share.ts): a search on one
-- replica forms them, GET /narratives/{id} on any replica reads them for their hour. The
-- narrative goes back to clients as written: json, not jsonb.
CREATE TABLE emergent.narratives (
  id           text PRIMARY KEY,
  generation   text NOT NULL,
  narrative    json NOT NULL,
  members      integer[] NOT NULL,
  daily_counts integer[] NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX narratives_expiry ON emergent.narratives (expires_at);
