-- Idem store, version 1. Applied by `idemctl migrate` inside one transaction.
-- Every key lookup is by the full primary key (tenant, endpoint, idem_key), so the schema
-- stays distributable by key (DESIGN §8).

CREATE SCHEMA IF NOT EXISTS idem;

-- Every policy an enforcer ran with; the newest row is the policy in force.
CREATE TABLE idem.policies (
    version      integer     GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sha256       text        NOT NULL,
    document     jsonb       NOT NULL,
    source       text        NOT NULL DEFAULT '',
    effective_at timestamptz NOT NULL DEFAULT now()
);

-- The live generation of each key. state: processing (leased to one executor) | done.
CREATE TABLE idem.keys (
    tenant         text        NOT NULL,
    endpoint       text        NOT NULL,           -- 'POST /v1/payments'
    idem_key       text        NOT NULL,
    generation     integer     NOT NULL DEFAULT 1,
    tier           text        NOT NULL,
    policy_version integer     REFERENCES idem.policies (version),
    fingerprint    bytea       NOT NULL,
    state          text        NOT NULL CHECK (state IN ('processing', 'done')),
    lease_token    uuid,
    lease_until    timestamptz,
    resp_status    integer,
    resp_headers   jsonb,
    resp_body      bytea,
    resource_ref   text,                            -- e.g. 'pay_…' taken from the response
    request_id     text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    completed_at   timestamptz,
    expires_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant, endpoint, idem_key)
);
CREATE INDEX keys_expires_at ON idem.keys (expires_at);
CREATE INDEX keys_resource_ref ON idem.keys (resource_ref) WHERE resource_ref IS NOT NULL;
CREATE INDEX keys_processing ON idem.keys (lease_until) WHERE state = 'processing';

-- Earlier generations: a key is never silently deleted. The body may be dropped after
-- its own retention (body_dropped_at); everything else stays for the audit retention.
CREATE TABLE idem.key_archive (
    tenant          text        NOT NULL,
    endpoint        text        NOT NULL,
    idem_key        text        NOT NULL,
    generation      integer     NOT NULL,
    tier            text        NOT NULL,
    policy_version  integer,
    fingerprint     bytea       NOT NULL,
    state           text        NOT NULL,           -- state when archived: done | processing
    resp_status     integer,
    resp_headers    jsonb,
    resp_body       bytea,
    resource_ref    text,
    request_id      text,
    created_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    expires_at      timestamptz NOT NULL,
    archived_at     timestamptz NOT NULL DEFAULT now(),
    archived_by     text        NOT NULL,           -- 'sweeper' | 'reuse'
    purge_after     timestamptz NOT NULL,
    body_dropped_at timestamptz,
    PRIMARY KEY (tenant, endpoint, idem_key, generation)
);
CREATE INDEX key_archive_purge_after ON idem.key_archive (purge_after);
CREATE INDEX key_archive_resource_ref ON idem.key_archive (resource_ref) WHERE resource_ref IS NOT NULL;

-- One row per decision. Executions are written in the same transaction as the key;
-- read-only decisions (replay, conflict, mismatch, rejection) are batched by the enforcer.
-- Kept cheap to append to (a replay's only write): no primary-key index, BRIN on time.
CREATE TABLE idem.events (
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    at          timestamptz NOT NULL DEFAULT now(),
    tenant      text        NOT NULL,
    endpoint    text        NOT NULL,
    idem_key    text        NOT NULL,
    generation  integer,
    tier        text        NOT NULL DEFAULT '',
    outcome     text        NOT NULL CHECK (outcome IN (
                  'executed', 'executed_after_expiry', 'replayed', 'conflict', 'mismatch',
                  'rejected_expired', 'lease_takeover', 'released', 'lease_lost', 'waited')),
    fingerprint bytea,
    status      integer,
    latency_ms  double precision,
    request_id  text,
    detail      text
);
CREATE INDEX events_key ON idem.events (tenant, endpoint, idem_key, at);
CREATE INDEX events_at ON idem.events USING brin (at);

-- Roles: the service writes keys, the console only reads, the admin also sweeps.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_service') THEN
    CREATE ROLE idem_service NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_console') THEN
    CREATE ROLE idem_console NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_admin') THEN
    CREATE ROLE idem_admin NOLOGIN;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'idem roles not created: the migrating user lacks CREATEROLE';
END $$;
