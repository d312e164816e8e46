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
-- The touched accounts (`p_accounts`, and those of the holds in `p_holds`) are locked in id
-- order (concurrent batches queue on an account, never deadlock) and read once; the operations
-- run on those figures in memory, in order, and the writes follow as one statement per table
-- (updating an account row once per operation would cost a new row version each time). A batch
-- never carries two operations on one hold (batcher.ts keeps them apart).
CREATE FUNCTION ledger.apply(
  -- The operations, one array element each: kind ('hold', 'settle', 'release', 'topup'); id (of
  -- the new hold or top-up, or of the hold resolved); account (hold, top-up); key (hold); amount
  -- (held, charged, 0, added); ref, what (hold); note or reason (top-up, release); the
  -- Idempotency-Key record a settlement stores (key, body hash, response as JSON text).
  kinds text[], ids text[], accts text[], keys text[], amounts bigint[], refs text[], whats text[], notes text[],
  idem_keys text[], idem_hashes text[], idem_responses text[],
  -- The accounts named, the holds resolved: what to lock and read.
  p_accounts text[], p_holds text[], replica text,
  -- Per operation: null or why it was refused ('not_found', 'insufficient_credits',
  -- 'hold_not_open', 'exceeds_hold'); the account's balance and held sum after it (before it,
  -- when refused). `stamp`: the batch's time.
  OUT errors text[], OUT balances bigint[], OUT helds bigint[], OUT stamp timestamptz
) LANGUAGE plpgsql AS $$
DECLARE
  op       record;
  acc_id   text[];
  bal      bigint[];
  held     bigint[];
  touched  boolean[];
  h_id     text[];
  h_acc    text[];
  h_key    text[];
  h_amt    bigint[];
  h_ref    text[];
  h_what   text[];
  i        integer;
  j        integer;
  -- New holds
  n_id text[] := '{}'; n_acc text[] := '{}'; n_key text[] := '{}'; n_amt bigint[] := '{}'; n_ref text[] := '{}'; n_what text[] := '{}';
  -- Resolved holds
  gone text[] := '{}';
  -- Usage entries
  e_type text[] := '{}'; e_acc text[] := '{}'; e_key text[] := '{}'; e_hold text[] := '{}'; e_amt bigint[] := '{}';
  e_held bigint[] := '{}'; e_ref text[] := '{}'; e_what text[] := '{}'; e_reason text[] := '{}'; e_after bigint[] := '{}';
  -- Idempotency records stored with their settlement
  q_acc text[] := '{}'; q_key text[] := '{}'; q_hash text[] := '{}'; q_resp text[] := '{}';
BEGIN
  stamp := now();
  errors := '{}'; balances := '{}'; helds := '{}';
  -- Locked in id order, then read as they are once the lock is ours.
  SELECT array_agg(a.id ORDER BY a.id), array_agg(a.balance_micro ORDER BY a.id), array_agg(a.held_micro ORDER BY a.id)
    INTO acc_id, bal, held
    FROM (SELECT id, balance_micro, held_micro FROM ledger.accounts
            WHERE id = ANY (p_accounts) OR id IN (SELECT account_id FROM ledger.holds WHERE id = ANY (p_holds))
            ORDER BY id FOR UPDATE) a;
  touched := array_fill(false, ARRAY[coalesce(array_length(acc_id, 1), 0)]);
  IF cardinality(p_holds) > 0 THEN
    SELECT array_agg(id), array_agg(account_id), array_agg(key_id), array_agg(amount_micro), array_agg(ref), array_agg(what)
      INTO h_id, h_acc, h_key, h_amt, h_ref, h_what
      FROM ledger.holds WHERE id = ANY (p_holds);
  END IF;

  FOR op IN SELECT * FROM unnest(kinds, ids, accts, keys, amounts, refs, whats, notes, idem_keys, idem_hashes, idem_responses)
                     AS u(kind, id, account, key, amount, ref, what, note, ikey, ihash, iresp) LOOP
    IF op.kind = 'hold' OR op.kind = 'topup' THEN
      i := array_position(acc_id, op.account);
      IF i IS NULL THEN
        errors := array_append(errors, 'not_found'); balances := array_append(balances, 0::bigint); helds := array_append(helds, 0::bigint);
        CONTINUE;
      END IF;
      IF op.kind = 'hold' THEN
        IF op.amount > bal[i] - held[i] THEN
          errors := array_append(errors, 'insufficient_credits');
          balances := array_append(balances, bal[i]); helds := array_append(helds, held[i]);
          CONTINUE;
        END IF;
        held[i] := held[i] + op.amount;
        n_id := array_append(n_id, op.id); n_acc := array_append(n_acc, op.account); n_key := array_append(n_key, op.key);
        n_amt := array_append(n_amt, op.amount); n_ref := array_append(n_ref, op.ref); n_what := array_append(n_what, op.what);
      ELSE
        bal[i] := bal[i] + op.amount;
        e_type := array_append(e_type, 'topup'); e_acc := array_append(e_acc, op.account); e_key := array_append(e_key, NULL::text);
        e_hold := array_append(e_hold, NULL::text); e_amt := array_append(e_amt, op.amount); e_held := array_append(e_held, NULL::bigint);
        e_ref := array_append(e_ref, op.id); e_what := array_append(e_what, op.note); e_reason := array_append(e_reason, NULL::text);
        e_after := array_append(e_after, bal[i]);
      END IF;
    ELSIF op.kind = 'settle' OR op.kind = 'release' THEN
      j := array_position(h_id, op.id);
      IF j IS NULL OR op.amount > h_amt[j] THEN
        errors := array_append(errors, CASE WHEN j IS NULL THEN 'hold_not_open' ELSE 'exceeds_hold' END);
        balances := array_append(balances, 0::bigint); helds := array_append(helds, 0::bigint);
        CONTINUE;
      END IF;
      i := array_position(acc_id, h_acc[j]);
      held[i] := held[i] - h_amt[j];
      bal[i] := bal[i] - op.amount;
      gone := array_append(gone, op.id);
      e_type := array_append(e_type, CASE WHEN op.kind = 'settle' THEN 'settlement' ELSE 'refund' END);
      e_acc := array_append(e_acc, h_acc[j]); e_key := array_append(e_key, h_key[j]); e_hold := array_append(e_hold, op.id);
      e_amt := array_append(e_amt, op.amount); e_held := array_append(e_held, h_amt[j]);
      e_ref := array_append(e_ref, h_ref[j]); e_what := array_append(e_what, h_what[j]); e_reason := array_append(e_reason, op.note);
      e_after := array_append(e_after, bal[i]);
      IF op.ikey IS NOT NULL THEN
        q_acc := array_append(q_acc, h_acc[j]); q_key := array_append(q_key, op.ikey);
        q_hash := array_append(q_hash, op.ihash); q_resp := array_append(q_resp, op.iresp);
      END IF;
    ELSE
      RAISE EXCEPTION 'ledger.apply: unknown operation %', op.kind;
    END IF;
    touched[i] := true;
    errors := array_append(errors, NULL::text); balances := array_append(balances, bal[i]); helds := array_append(helds, held[i]);
  END LOOP;

  IF cardinality(gone) > 0 THEN
    DELETE FROM ledger.holds WHERE id = ANY (gone);
  END IF;
  IF cardinality(n_id) > 0 THEN
    INSERT INTO ledger.holds (id, account_id, key_id, amount_micro, ref, what, replica_id, at)
      SELECT u.*, replica, stamp FROM unnest(n_id, n_acc, n_key, n_amt, n_ref, n_what) AS u;
  END IF;
  IF cardinality(e_type) > 0 THEN
    INSERT INTO ledger.entries (type, account_id, key_id, hold_id, amount_micro, held_micro, ref, what, reason, balance_after, at)
      SELECT u.t, u.a, u.k, u.h, u.m, u.hm, u.r, u.w, u.re, u.b, stamp
        FROM unnest(e_type, e_acc, e_key, e_hold, e_amt, e_held, e_ref, e_what, e_reason, e_after)
             WITH ORDINALITY AS u(t, a, k, h, m, hm, r, w, re, b, n)
        ORDER BY u.n;
  END IF;
  IF cardinality(q_acc) > 0 THEN
    INSERT INTO ledger.idempotency AS i (account_id, key, body_hash, replica_id, response, at)
      SELECT u.a, u.k, u.h, NULL, u.r, stamp FROM unnest(q_acc, q_key, q_hash, q_resp) AS u(a, k, h, r)
      ON CONFLICT (account_id, key) DO UPDATE
        SET body_hash = EXCLUDED.body_hash, replica_id = NULL, response = EXCLUDED.response, at = EXCLUDED.at;
  END IF;
  IF true = ANY (touched) THEN
    UPDATE ledger.accounts a SET balance_micro = u.b, held_micro = u.h
      FROM unnest(acc_id, bal, held, touched) AS u(id, b, h, t)
      WHERE a.id = u.id AND u.t;
  END IF;
END $$;
