-- Demo tables, version 4 (`idemctl migrate --demo`; `idemctl migrate` alone never applies it: a
-- production store has no demo tables). The embedded test endpoint's ledger (DESIGN §5). It
-- plays the payment channel's side: one row per execution, written in the same transaction as the
-- key's completion, so a ledger row exists exactly when its key says the work was done and
-- "charged twice" is visible as two rows for one key. Not part of enforcement: only
-- `idemctl serve` and the demo write here; the console and `idemctl explain` may read it.
CREATE SCHEMA IF NOT EXISTS idem_demo;

CREATE TABLE IF NOT EXISTS idem_demo.ledger (
    id          text        PRIMARY KEY,             -- pay_…, re_…, ord_…, ack_…
    kind        text        NOT NULL CHECK (kind IN ('payment', 'refund', 'order', 'webhook_ack')),
    tenant      text        NOT NULL DEFAULT '',
    endpoint    text        NOT NULL,                -- 'POST /v1/payments'
    idem_key    text,                                -- NULL when the tier made the key optional
    generation  integer,
    status      text        NOT NULL CHECK (status IN ('succeeded', 'failed')),
    amount      bigint,
    currency    text,
    customer    text,
    request_id  text,
    payload     jsonb       NOT NULL,                -- what the channel received, incl. the key
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ledger_idem_key ON idem_demo.ledger (idem_key, tenant);
CREATE INDEX IF NOT EXISTS ledger_created_at ON idem_demo.ledger (created_at);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_service') THEN
    GRANT USAGE ON SCHEMA idem_demo TO idem_service;
    GRANT SELECT, INSERT ON idem_demo.ledger TO idem_service;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_console') THEN
    GRANT USAGE ON SCHEMA idem_demo TO idem_console;
    GRANT SELECT ON idem_demo.ledger TO idem_console;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_admin') THEN
    GRANT USAGE ON SCHEMA idem_demo TO idem_admin;
    GRANT SELECT ON idem_demo.ledger TO idem_admin;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'idem_demo grants skipped: the migrating user may not grant them';
END $$;
