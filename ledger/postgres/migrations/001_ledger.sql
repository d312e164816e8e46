-- The credit ledger on PostgreSQL (docs/ledger.md, "PostgreSQL"): the file ledger's semantics in
-- tables. Money is bigint micro-credits. An account row carries its balance and the sum of its open
-- holds; the CHECKs make an overdraft impossible whatever a client sends. Usage entries are
-- append-only (a trigger refuses UPDATE, DELETE and TRUNCATE); an entry per resolved hold, and
-- hold_id UNIQUE makes "a hold resolves exactly once" a constraint, not only a code path.

CREATE TABLE ledger.accounts (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  balance_micro bigint NOT NULL DEFAULT 0,
  held_micro    bigint NOT NULL DEFAULT 0,
  CONSTRAINT held_not_negative CHECK (held_micro >= 0),
  CONSTRAINT never_overdrawn CHECK (balance_micro >= held_micro)
);

CREATE TABLE ledger.api_keys (
  id         text PRIMARY KEY,
  account_id text NOT NULL REFERENCES ledger.accounts (id),
  name       text NOT NULL,
  -- SHA-256 of the secret, hex; the secret itself is never stored.
  hash       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_account ON ledger.api_keys (account_id);

-- Every ledger process (an API replica, the admin CLI) registers here and heartbeats; a hold or a
-- running Idempotency-Key belongs to the replica that placed it, and is released when that
-- replica's heartbeat is older than the lease.
CREATE TABLE ledger.replicas (
  id           text PRIMARY KEY,
  host         text NOT NULL,
  pid          integer NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger.holds (
  id           text PRIMARY KEY,
  account_id   text NOT NULL REFERENCES ledger.accounts (id),
  key_id       text,
  amount_micro bigint NOT NULL CHECK (amount_micro >= 0),
  ref          text NOT NULL,
  what         text NOT NULL,
  replica_id   text NOT NULL,
  at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX holds_replica ON ledger.holds (replica_id);
CREATE INDEX holds_account ON ledger.holds (account_id);

CREATE TABLE ledger.entries (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type          text NOT NULL CHECK (type IN ('topup', 'settlement', 'refund')),
  account_id    text NOT NULL REFERENCES ledger.accounts (id),
  key_id        text,
  -- The hold a settlement or refund resolved: once.
  hold_id       text UNIQUE,
  -- Credits moved on the balance: added (top-up), charged (settlement), 0 (refund).
  amount_micro  bigint NOT NULL CHECK (amount_micro >= 0),
  held_micro    bigint,
  ref           text,
  what          text,
  reason        text,
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  at            timestamptz NOT NULL DEFAULT now(),
  CHECK ((type = 'topup') = (hold_id IS NULL)),
  CHECK (held_micro IS NULL OR amount_micro <= held_micro)
);
CREATE INDEX entries_account ON ledger.entries (account_id, seq);
CREATE INDEX entries_key ON ledger.entries (key_id, seq) WHERE key_id IS NOT NULL;

CREATE FUNCTION ledger.append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger.entries is append-only';
END $$;
CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON ledger.entries
  FOR EACH ROW EXECUTE FUNCTION ledger.append_only();
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON ledger.entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.append_only();

-- Idempotency-Key records (Stripe / IETF semantics): running (replica_id set, response null) or
-- stored with the settlement that charged for it (response set), kept for the TTL.
CREATE TABLE ledger.idempotency (
  account_id text NOT NULL,
  key        text NOT NULL,
  body_hash  text NOT NULL,
  replica_id text,
  -- The response as JSON text, replayed verbatim (text, not jsonb: jsonb would reorder it).
  response   text,
  at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);

-- Money moves only here: a batch of holds, settlements, releases and top-ups applied in order in
-- one transaction (one commit, one WAL flush for the batch: group commit, as the file ledger
-- does). Each operation checks before it changes anything and answers for itself; a refused one
-- (insufficient credits, a hold no longer open) leaves no trace and does not fail the others.
CREATE FUNCTION ledger.apply(ops jsonb, replica text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  op      jsonb;
  results jsonb[] := '{}';
  acc     ledger.accounts%ROWTYPE;
  h       ledger.holds%ROWTYPE;
  amt     bigint;
  e_seq   bigint;
  h_at    timestamptz;
BEGIN
  -- Every account the batch touches, locked in id order: concurrent batches queue on an account,
  -- never deadlock.
  PERFORM 1 FROM ledger.accounts
    WHERE id IN (SELECT o ->> 'account' FROM jsonb_array_elements(ops) o WHERE o ? 'account'
                 UNION
                 SELECT account_id FROM ledger.holds
                   WHERE id IN (SELECT o ->> 'hold' FROM jsonb_array_elements(ops) o WHERE o ? 'hold'))
    ORDER BY id FOR UPDATE;
  FOR op IN SELECT value FROM jsonb_array_elements(ops) LOOP
    amt := (op ->> 'amount')::bigint;
    CASE op ->> 'op'
    WHEN 'hold' THEN
      UPDATE ledger.accounts SET held_micro = held_micro + amt
        WHERE id = op ->> 'account' AND balance_micro - held_micro >= amt
        RETURNING * INTO acc;
      IF FOUND THEN
        INSERT INTO ledger.holds (id, account_id, key_id, amount_micro, ref, what, replica_id)
          VALUES (op ->> 'id', acc.id, op ->> 'key', amt, op ->> 'ref', op ->> 'what', replica)
          RETURNING at INTO h_at;
        results := array_append(results, jsonb_build_object(
          'balance', acc.balance_micro, 'held', acc.held_micro, 'at', h_at));
      ELSE
        SELECT * INTO acc FROM ledger.accounts WHERE id = op ->> 'account';
        results := array_append(results, CASE WHEN FOUND
          THEN jsonb_build_object('error', 'insufficient_credits', 'available', acc.balance_micro - acc.held_micro)
          ELSE jsonb_build_object('error', 'not_found') END);
      END IF;
    WHEN 'settle', 'release' THEN
      DELETE FROM ledger.holds WHERE id = op ->> 'hold' AND amount_micro >= amt RETURNING * INTO h;
      IF NOT FOUND THEN
        results := array_append(results, jsonb_build_object('error',
          CASE WHEN EXISTS (SELECT 1 FROM ledger.holds WHERE id = op ->> 'hold') THEN 'exceeds_hold' ELSE 'hold_not_open' END));
      ELSE
        UPDATE ledger.accounts
          SET held_micro = held_micro - h.amount_micro, balance_micro = balance_micro - amt
          WHERE id = h.account_id RETURNING * INTO acc;
        INSERT INTO ledger.entries (type, account_id, key_id, hold_id, amount_micro, held_micro, ref, what, reason, balance_after)
          VALUES (CASE WHEN op ->> 'op' = 'settle' THEN 'settlement' ELSE 'refund' END, h.account_id, h.key_id, h.id,
                  amt, h.amount_micro, h.ref, h.what, op ->> 'reason', acc.balance_micro)
          RETURNING seq INTO e_seq;
        IF op ? 'idem' THEN
          INSERT INTO ledger.idempotency AS i (account_id, key, body_hash, replica_id, response)
            VALUES (h.account_id, op -> 'idem' ->> 'key', op -> 'idem' ->> 'bodyHash', NULL, op -> 'idem' ->> 'response')
            ON CONFLICT (account_id, key) DO UPDATE
              SET body_hash = EXCLUDED.body_hash, replica_id = NULL, response = EXCLUDED.response, at = now();
        END IF;
        results := array_append(results, jsonb_build_object(
          'balance', acc.balance_micro, 'held', acc.held_micro, 'seq', e_seq));
      END IF;
    WHEN 'topup' THEN
      UPDATE ledger.accounts SET balance_micro = balance_micro + amt WHERE id = op ->> 'account' RETURNING * INTO acc;
      IF NOT FOUND THEN
        results := array_append(results, jsonb_build_object('error', 'not_found'));
      ELSE
        INSERT INTO ledger.entries (type, account_id, amount_micro, ref, what, balance_after)
          VALUES ('topup', acc.id, amt, op ->> 'id', op ->> 'note', acc.balance_micro)
          RETURNING seq INTO e_seq;
        results := array_append(results, jsonb_build_object(
          'balance', acc.balance_micro, 'held', acc.held_micro, 'seq', e_seq));
      END IF;
    ELSE
      RAISE EXCEPTION 'ledger.apply: unknown operation %', op ->> 'op';
    END CASE;
  END LOOP;
  RETURN to_jsonb(results);
END $$;
