-- The webhook outbox on PostgreSQL (serve/alerts/pg-outbox-store.ts): the events the watches fired and
-- every delivery attempt, shared by the replicas. Which event is attempted next is pg-boss's
-- (queue 'webhook-deliveries'); the lease here keeps an event to one run at a time.

CREATE TABLE alert_outbox.events (
  event_id        text PRIMARY KEY,
  -- Insertion order: "newest first" in the API.
  seq             bigserial NOT NULL,
  watch_id        text NOT NULL,
  event           json NOT NULL,
  status          text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  delivered_at    timestamptz,
  -- A queue entry attempts the event only when it names this turn (retries, redeliveries and
  -- resumes take a new one, so older entries find nothing to do).
  turn            integer NOT NULL DEFAULT 1,
  window_start    timestamptz NOT NULL,
  window_attempts integer NOT NULL DEFAULT 0,
  -- A run holds the event until then; a run that died lets the next one in after it.
  lease_until     timestamptz
);
CREATE INDEX events_watch ON alert_outbox.events (watch_id, seq DESC);

CREATE TABLE alert_outbox.attempts (
  seq        bigserial PRIMARY KEY,
  event_id   text NOT NULL,
  watch_id   text NOT NULL,
  attempt    integer NOT NULL,
  at         timestamptz NOT NULL,
  status     integer,
  error      text,
  latency_ms integer NOT NULL,
  outcome    text NOT NULL
);
CREATE INDEX attempts_watch ON alert_outbox.attempts (watch_id, seq DESC);
