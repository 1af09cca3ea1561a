-- Demo tables, version 21 (`idemctl migrate --demo` only). What a real client did against a
-- fault profile (`idemctl serve --allow-fault-injection`, routes /faults/<profile>/...). One row per attempt, written only by
-- those routes, never by enforcement; `idemctl measure` reads it to fit a retry policy.
CREATE SCHEMA IF NOT EXISTS idem_demo;

CREATE TABLE IF NOT EXISTS idem_demo.fault_attempts (
    id              bigserial   PRIMARY KEY,
    arrived_at      timestamptz NOT NULL,            -- the request's head was read
    ended_at        timestamptz NOT NULL,            -- answered, reset, or (hang) the client gave up
    profile         text        NOT NULL,            -- '503-retry-after-2', 'reset', 'hang', ...
    operation       text,                            -- the route's op-<id> segment, when given
    idem_key        text,                            -- Idempotency-Key as sent (NULL: none)
    user_agent      text        NOT NULL DEFAULT '',
    method          text        NOT NULL,
    path            text        NOT NULL,            -- the route after the profile (and op-<id>)
    outcome         text        NOT NULL,            -- '500', '503', '409', 'reset', 'hang'
    retry_after     text,                            -- Retry-After the answer carried
    remote          text        NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS fault_attempts_arrived ON idem_demo.fault_attempts (arrived_at);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_service') THEN
    GRANT USAGE ON SCHEMA idem_demo TO idem_service;
    GRANT SELECT, INSERT ON idem_demo.fault_attempts TO idem_service;
    GRANT USAGE ON SEQUENCE idem_demo.fault_attempts_id_seq TO idem_service;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_console') THEN
    GRANT USAGE ON SCHEMA idem_demo TO idem_console;
    GRANT SELECT ON idem_demo.fault_attempts TO idem_console;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'idem_demo grants skipped: the migrating user may not grant them';
END $$;
