-- Jobs on PostgreSQL (serve/jobs/pg-job-store.ts): the records every replica reads and writes,
-- their results, and the job cache (docs/jobs.md, "Cache"). Which job runs next is pg-boss's
-- (its own schema, pgboss). Records and results are json and text, not jsonb: they go back to
-- clients as written, key order included.

CREATE TABLE jobs.jobs (
  job_id      text PRIMARY KEY,
  account_id  text NOT NULL,
  -- The submit's Idempotency-Key: one job per account and key, across replicas.
  idem_key    text,
  status      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  record      json NOT NULL,
  UNIQUE (account_id, idem_key)
);
CREATE INDEX jobs_finished ON jobs.jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE jobs.results (
  job_id text PRIMARY KEY,
  json   text NOT NULL
);

CREATE TABLE jobs.cache (
  key           text PRIMARY KEY,
  kind          text NOT NULL,
  -- The job whose result holds the answer, the account that paid for it and what it was charged.
  job_id        text NOT NULL,
  payer         text NOT NULL,
  charged_micro bigint NOT NULL,
  delivered     integer NOT NULL,
  expires_at    timestamptz NOT NULL
);
