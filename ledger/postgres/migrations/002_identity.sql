-- The ledger's identity (docs/ledger.md, "One ledger per data directory"): made once with the
-- database's ledger, recorded by each data directory that uses it, so a start against another
-- database (another server, a fresh one) is told apart from this one without storing its URL's password.
CREATE TABLE ledger.identity (
  id         text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  one        boolean NOT NULL DEFAULT true UNIQUE CHECK (one)
);
INSERT INTO ledger.identity (id) VALUES ('lgr_' || substr(md5(random()::text || clock_timestamp()::text), 1, 16));
