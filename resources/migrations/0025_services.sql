-- Idem store, version 25: several services on one store (docs/store.md, "Services").
-- Every `serve` and `proxy` runs as a named service (`--service`, default "default"). A key's
-- identity is (tenant, endpoint, key, service): two services with the same route, tenant and key
-- hold two keys, and a replay never crosses services (as it never crosses tenants). Existing
-- rows become service 'default', which is what every enforcer was until now, so their keys keep
-- replaying. Each service chooses its own policy (idem.policy_choices, 0022) and the sweeper
-- archives each service's keys under that service's retentions.
--
-- The service is the last column of each key index: the console's orders (tenant, endpoint,
-- key[, generation]) stay prefixes of the indexes they walk, and the service breaks their ties.

-- 1. The column. A default, so PostgreSQL adds it without rewriting the tables, and binaries of
--    older schemas (which name no service) keep writing and reading 'default' during an upgrade.
ALTER TABLE idem.keys ADD COLUMN IF NOT EXISTS service text NOT NULL DEFAULT 'default';
ALTER TABLE idem.key_archive ADD COLUMN IF NOT EXISTS service text NOT NULL DEFAULT 'default';
ALTER TABLE idem.events ADD COLUMN IF NOT EXISTS service text NOT NULL DEFAULT 'default';

-- 2. The key's identity.
ALTER TABLE idem.keys DROP CONSTRAINT keys_pkey,
  ADD CONSTRAINT keys_pkey PRIMARY KEY (tenant, endpoint, idem_key, service);
ALTER TABLE idem.key_archive DROP CONSTRAINT key_archive_pkey,
  ADD CONSTRAINT key_archive_pkey PRIMARY KEY (tenant, endpoint, idem_key, generation, service);

-- The console's sort indexes (0023) end with the key; the service completes it.
DROP INDEX IF EXISTS idem.keys_done_status;
CREATE INDEX keys_done_status ON idem.keys ((coalesce(resp_status, 0)), tenant, endpoint, idem_key, service)
    WHERE state = 'done';
DROP INDEX IF EXISTS idem.keys_later_generations;
CREATE INDEX keys_later_generations ON idem.keys (generation, tenant, endpoint, idem_key, service)
    WHERE generation <> 1;
DROP INDEX IF EXISTS idem.key_archive_status;
CREATE INDEX key_archive_status ON idem.key_archive
    ((coalesce(resp_status, 0)), tenant, endpoint, idem_key, generation, service);
DROP INDEX IF EXISTS idem.key_archive_generation;
CREATE INDEX key_archive_generation ON idem.key_archive (generation, tenant, endpoint, idem_key, service);

-- 3. A live generation is newer than every archived one of the same key (0014), per service.
CREATE OR REPLACE FUNCTION idem.keys_generation_after_archive()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, idem, pg_temp
AS $$
DECLARE
  v_archived integer;
BEGIN
  SELECT max(a.generation) INTO v_archived FROM idem.key_archive a
   WHERE a.tenant = NEW.tenant AND a.endpoint = NEW.endpoint AND a.idem_key = NEW.idem_key
     AND a.service = NEW.service;
  IF v_archived IS NOT NULL AND v_archived >= NEW.generation THEN
    RAISE EXCEPTION 'key % would start generation % but generation % is archived', NEW.idem_key,
        NEW.generation, v_archived
      USING ERRCODE = 'IDA01';
  END IF;
  RETURN NULL;
END $$;

-- 4. The full decision (0014's, unchanged but for the service in every key condition and row).
CREATE OR REPLACE FUNCTION idem.claim(
    p_tenant text, p_endpoint text, p_key text, p_fingerprint bytea, p_tier text,
    p_policy_version integer, p_ttl interval, p_lease interval, p_on_expired text,
    p_request_id text, p_archive_retention interval, p_service text)
RETURNS TABLE (decision text, generation integer, expires_at timestamptz, lease_token uuid,
               lease_until timestamptz, resp_status integer, resp_headers jsonb, resp_body bytea,
               retry_after_ms bigint, created_at timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, idem, pg_temp
AS $$
DECLARE
  r idem.keys%ROWTYPE;
  v_token uuid;
  v_prev integer;
  v_expires timestamptz := greatest(now() + p_ttl, now() + p_lease + interval '1 second');
BEGIN
  FOR attempt IN 1..8 LOOP
    SELECT * INTO r FROM idem.keys k
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service;

    IF NOT FOUND THEN
      SELECT max(a.generation) INTO v_prev FROM idem.key_archive a
       WHERE a.tenant = p_tenant AND a.endpoint = p_endpoint AND a.idem_key = p_key AND a.service = p_service;
      IF v_prev IS NOT NULL AND p_on_expired = 'reject' THEN
        RETURN QUERY SELECT 'rejected_expired'::text, v_prev, NULL::timestamptz, NULL::uuid,
          NULL::timestamptz, NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, NULL::timestamptz;
        RETURN;
      END IF;
      v_token := gen_random_uuid();
      INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, service, generation, tier, policy_version,
                                  fingerprint, state, lease_token, lease_until, request_id, expires_at)
      VALUES (p_tenant, p_endpoint, p_key, p_service, coalesce(v_prev, 0) + 1, p_tier, p_policy_version,
              p_fingerprint, 'processing', v_token, now() + p_lease, p_request_id, v_expires)
      ON CONFLICT DO NOTHING;
      IF FOUND THEN
        RETURN QUERY SELECT CASE WHEN v_prev IS NULL THEN 'execute' ELSE 'execute_after_expiry' END,
          coalesce(v_prev, 0) + 1, v_expires, v_token, now() + p_lease,
          NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, now();
        RETURN;
      END IF;
      CONTINUE;  -- a concurrent request inserted first: decide against its row
    END IF;

    IF r.expires_at <= now() AND NOT (r.state = 'processing' AND r.lease_until > now()) THEN
      IF p_on_expired = 'reject' THEN
        RETURN QUERY SELECT 'rejected_expired'::text, r.generation, r.expires_at, NULL::uuid,
          NULL::timestamptz, NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, r.created_at;
        RETURN;
      END IF;
      SELECT * INTO r FROM idem.keys k
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service
         FOR UPDATE;
      IF NOT FOUND OR r.expires_at > now() OR (r.state = 'processing' AND r.lease_until > now()) THEN
        CONTINUE;
      END IF;
      INSERT INTO idem.key_archive (tenant, endpoint, idem_key, service, generation, tier, policy_version,
          fingerprint, state, resp_status, resp_headers, resp_body, resource_ref, request_id,
          created_at, completed_at, expires_at, archived_at, archived_by, purge_after)
      VALUES (r.tenant, r.endpoint, r.idem_key, r.service, r.generation, r.tier, r.policy_version,
          r.fingerprint, r.state, r.resp_status, r.resp_headers, r.resp_body, r.resource_ref,
          r.request_id, r.created_at, r.completed_at, r.expires_at, now(), 'reuse',
          now() + p_archive_retention);
      v_token := gen_random_uuid();
      UPDATE idem.keys k SET generation = r.generation + 1, tier = p_tier,
          policy_version = p_policy_version, fingerprint = p_fingerprint, state = 'processing',
          lease_token = v_token, lease_until = now() + p_lease, resp_status = NULL,
          resp_headers = NULL, resp_body = NULL, resource_ref = NULL, request_id = p_request_id,
          created_at = now(), completed_at = NULL, expires_at = v_expires
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service;
      RETURN QUERY SELECT 'execute_after_expiry'::text, r.generation + 1, v_expires, v_token,
        now() + p_lease, NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, now();
      RETURN;
    END IF;

    IF r.fingerprint <> p_fingerprint THEN
      RETURN QUERY SELECT 'mismatch'::text, r.generation, r.expires_at, NULL::uuid, r.lease_until,
        NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, r.created_at;
      RETURN;
    END IF;

    IF r.state = 'done' THEN
      RETURN QUERY SELECT 'replay'::text, r.generation, r.expires_at, NULL::uuid, NULL::timestamptz,
        r.resp_status, r.resp_headers, r.resp_body, NULL::bigint, r.created_at;
      RETURN;
    END IF;

    IF r.lease_until > now() THEN
      RETURN QUERY SELECT 'conflict'::text, r.generation, r.expires_at, NULL::uuid, r.lease_until,
        NULL::integer, NULL::jsonb, NULL::bytea,
        greatest(1, ceil(extract(epoch FROM (r.lease_until - now())) * 1000))::bigint, r.created_at;
      RETURN;
    END IF;

    v_token := gen_random_uuid();
    UPDATE idem.keys k SET lease_token = v_token, lease_until = now() + p_lease,
        request_id = p_request_id,
        expires_at = greatest(k.expires_at, now() + p_lease + interval '1 second')
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service
       AND k.state = 'processing' AND k.lease_token IS NOT DISTINCT FROM r.lease_token
    RETURNING k.expires_at INTO r.expires_at;
    IF FOUND THEN
      INSERT INTO idem.events (tenant, endpoint, idem_key, service, generation, tier, outcome, fingerprint,
                               request_id, detail)
      VALUES (p_tenant, p_endpoint, p_key, p_service, r.generation, p_tier, 'lease_takeover', p_fingerprint,
              p_request_id, 'lease expired at ' || r.lease_until::text);
      RETURN QUERY SELECT 'takeover'::text, r.generation, r.expires_at, v_token, now() + p_lease,
        NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, r.created_at;
      RETURN;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'idem.claim: key % kept changing under contention', p_key
    USING ERRCODE = '40001';
END $$;

-- Binaries of older schemas name no service: theirs is 'default' (a rolling upgrade).
CREATE OR REPLACE FUNCTION idem.claim(
    p_tenant text, p_endpoint text, p_key text, p_fingerprint bytea, p_tier text,
    p_policy_version integer, p_ttl interval, p_lease interval, p_on_expired text,
    p_request_id text, p_archive_retention interval)
RETURNS TABLE (decision text, generation integer, expires_at timestamptz, lease_token uuid,
               lease_until timestamptz, resp_status integer, resp_headers jsonb, resp_body bytea,
               retry_after_ms bigint, created_at timestamptz)
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  SELECT * FROM idem.claim(p_tenant, p_endpoint, p_key, p_fingerprint, p_tier, p_policy_version, p_ttl,
                           p_lease, p_on_expired, p_request_id, p_archive_retention, 'default'::text);
$$;

-- 5. Lease renewal and release, per service. The older signatures stay: they match the lease's
--    own token, unique to one key of one service, so they stay right for older binaries.
CREATE OR REPLACE FUNCTION idem.renew_leases(
    p_tenants text[], p_endpoints text[], p_keys text[], p_tokens uuid[], p_leases interval[], p_services text[])
RETURNS TABLE (lease_token uuid, lease_until timestamptz, expires_at timestamptz)
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  UPDATE idem.keys k
     SET lease_until = now() + h.lease,
         expires_at = greatest(k.expires_at, now() + h.lease + interval '1 second')
    FROM unnest(p_tenants, p_endpoints, p_keys, p_tokens, p_leases, p_services)
         AS h(tenant, endpoint, idem_key, token, lease, service)
   WHERE k.tenant = h.tenant AND k.endpoint = h.endpoint AND k.idem_key = h.idem_key AND k.service = h.service
     AND k.state = 'processing' AND k.lease_token = h.token
  RETURNING k.lease_token, k.lease_until, k.expires_at;
$$;

CREATE OR REPLACE FUNCTION idem.release(
    p_tenant text, p_endpoint text, p_key text, p_lease_token uuid, p_status integer,
    p_request_id text, p_reason text, p_service text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, idem, pg_temp
AS $$
DECLARE
  v_gen integer;
  v_tier text;
BEGIN
  DELETE FROM idem.keys k
   WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service
     AND k.state = 'processing' AND k.lease_token = p_lease_token
  RETURNING k.generation, k.tier INTO v_gen, v_tier;
  IF NOT FOUND THEN RETURN false; END IF;
  INSERT INTO idem.events (tenant, endpoint, idem_key, service, generation, tier, outcome, status,
                           request_id, detail)
  VALUES (p_tenant, p_endpoint, p_key, p_service, v_gen, v_tier, 'released', p_status, p_request_id, p_reason);
  RETURN true;
END $$;

-- 6. The sweeper. Retentions are per service and tier: p_services[i], p_tiers[i] keep archived
--    generations p_retentions[i]; a service '' stands for every service (a policy file given to
--    `idemctl sweep --policy`). A key no entry names keeps p_default_retention.
CREATE OR REPLACE FUNCTION idem.sweep_archive(p_limit integer, p_services text[], p_tiers text[],
                                              p_retentions interval[], p_default_retention interval)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  WITH victims AS (
    SELECT k.tenant, k.endpoint, k.idem_key, k.service
      FROM idem.keys k
     WHERE k.expires_at <= now()
       AND (k.state = 'done' OR k.lease_until IS NULL OR k.lease_until <= now())
       AND NOT EXISTS (SELECT 1 FROM idem.key_archive a
                        WHERE a.tenant = k.tenant AND a.endpoint = k.endpoint AND a.idem_key = k.idem_key
                          AND a.service = k.service AND a.generation >= k.generation)
     ORDER BY k.expires_at
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), moved AS (
    DELETE FROM idem.keys k
     USING victims v
     WHERE k.tenant = v.tenant AND k.endpoint = v.endpoint AND k.idem_key = v.idem_key AND k.service = v.service
    RETURNING k.*
  ), archived AS (
    INSERT INTO idem.key_archive (tenant, endpoint, idem_key, service, generation, tier, policy_version,
                                  fingerprint, state, resp_status, resp_headers, resp_body, resource_ref,
                                  request_id, created_at, completed_at, expires_at, archived_at, archived_by,
                                  purge_after)
    SELECT m.tenant, m.endpoint, m.idem_key, m.service, m.generation, m.tier, m.policy_version, m.fingerprint,
           m.state, m.resp_status, m.resp_headers, m.resp_body, m.resource_ref, m.request_id,
           m.created_at, m.completed_at, m.expires_at, now(), 'sweeper',
           now() + coalesce((SELECT r.retention
                               FROM unnest(p_services, p_tiers, p_retentions) AS r(service, tier, retention)
                              WHERE r.tier = m.tier AND r.service IN (m.service, '')
                              ORDER BY r.service DESC  -- the service's own entry before '' (any)
                              LIMIT 1), p_default_retention)
      FROM moved m
    RETURNING 1
  )
  SELECT count(*)::integer FROM archived;
$$;

-- Older sweepers name no service: their retentions hold for every service.
CREATE OR REPLACE FUNCTION idem.sweep_archive(p_limit integer, p_tiers text[], p_retentions interval[],
                                              p_default_retention interval)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  SELECT idem.sweep_archive(p_limit, array_fill(''::text, ARRAY[coalesce(cardinality(p_tiers), 0)]), p_tiers,
                            p_retentions, p_default_retention);
$$;

CREATE OR REPLACE FUNCTION idem.purge_archive(p_limit integer)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  WITH victims AS (
    SELECT a.tenant, a.endpoint, a.idem_key, a.generation, a.service
      FROM idem.key_archive a
     WHERE a.purge_after <= now()
     ORDER BY a.purge_after
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), purged AS (
    DELETE FROM idem.key_archive a
     USING victims v
     WHERE a.tenant = v.tenant AND a.endpoint = v.endpoint AND a.idem_key = v.idem_key
       AND a.generation = v.generation AND a.service = v.service
    RETURNING 1
  )
  SELECT count(*)::integer FROM purged;
$$;

CREATE OR REPLACE FUNCTION idem.purge_events(p_limit integer, p_older_than interval)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  WITH victims AS (
    SELECT e.ctid AS tid
      FROM idem.events e
     WHERE e.at < now() - p_older_than
       AND NOT EXISTS (SELECT 1 FROM idem.keys k
                        WHERE k.tenant = e.tenant AND k.endpoint = e.endpoint AND k.idem_key = e.idem_key
                          AND k.service = e.service AND k.generation = e.generation)
       AND NOT EXISTS (SELECT 1 FROM idem.key_archive a
                        WHERE a.tenant = e.tenant AND a.endpoint = e.endpoint AND a.idem_key = e.idem_key
                          AND a.service = e.service AND a.generation = e.generation)
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), purged AS (
    DELETE FROM idem.events e
     WHERE e.ctid = ANY (ARRAY(SELECT v.tid FROM victims v))
    RETURNING 1
  )
  SELECT count(*)::integer FROM purged;
$$;

-- Bodies past a tier's body retention, per service ('' : every service).
CREATE OR REPLACE FUNCTION idem.drop_archived_bodies(p_limit integer, p_service text, p_tier text,
                                                     p_retention interval)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  WITH victims AS (
    SELECT a.ctid AS tid
      FROM idem.key_archive a
     WHERE a.tier = p_tier AND (p_service = '' OR a.service = p_service)
       AND a.resp_body IS NOT NULL AND a.archived_at <= now() - p_retention
     ORDER BY a.archived_at
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), dropped AS (
    UPDATE idem.key_archive a SET resp_body = NULL, body_dropped_at = now()
     WHERE a.ctid = ANY (ARRAY(SELECT v.tid FROM victims v))
    RETURNING 1
  )
  SELECT count(*)::integer FROM dropped;
$$;

CREATE OR REPLACE FUNCTION idem.drop_archived_bodies(p_limit integer, p_tier text, p_retention interval)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$ SELECT idem.drop_archived_bodies(p_limit, ''::text, p_tier, p_retention); $$;

-- Its rows now name their service: a new result type, so the function is made again.
DROP FUNCTION IF EXISTS idem.unarchivable_keys(integer);
CREATE FUNCTION idem.unarchivable_keys(p_limit integer)
RETURNS TABLE (tenant text, endpoint text, idem_key text, service text, generation integer,
               archived_generation integer)
LANGUAGE sql STABLE
SET search_path = pg_catalog, idem, pg_temp
AS $$
  SELECT k.tenant, k.endpoint, k.idem_key, k.service, k.generation, a.generation
    FROM idem.keys k
    JOIN LATERAL (SELECT max(x.generation) AS generation FROM idem.key_archive x
                   WHERE x.tenant = k.tenant AND x.endpoint = k.endpoint AND x.idem_key = k.idem_key
                     AND x.service = k.service) a
      ON a.generation >= k.generation
   WHERE k.expires_at <= now()
   ORDER BY k.expires_at
   LIMIT greatest(p_limit, 0);
$$;

-- 7. The services that ran on this store, for the console's and idemctl's lists: every start
--    records itself here (a row per service, one index probe to list them all, where the keys
--    could only say by a scan). The service may write its own row; nothing else is written.
CREATE TABLE IF NOT EXISTS idem.services (
    service        text        PRIMARY KEY,
    policy_version integer     REFERENCES idem.policies (version),
    started_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO idem.services (service, policy_version, started_at)
SELECT 'default', max(version), max(effective_at) FROM idem.policies HAVING count(*) > 0
ON CONFLICT DO NOTHING;

-- 7. Privileges as in 0015, for the functions made here (by name: every signature of each).
DO $$
DECLARE
  f record;
  v_roles boolean := (SELECT count(*) FROM pg_roles
                       WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) = 3;
BEGIN
  IF v_roles THEN
    GRANT SELECT ON idem.services TO idem_service, idem_console, idem_admin;
    GRANT INSERT, UPDATE ON idem.services TO idem_service;
  END IF;
  FOR f IN SELECT p.oid::regprocedure AS fn, p.proname FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace
              AND p.proname IN ('claim', 'release', 'renew_leases', 'sweep_archive', 'purge_archive',
                                'purge_events', 'drop_archived_bodies', 'unarchivable_keys') LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.fn);
    IF f.proname IN ('sweep_archive', 'purge_archive', 'purge_events', 'drop_archived_bodies') THEN
      EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', f.fn);
    END IF;
    CONTINUE WHEN NOT v_roles;
    IF f.proname IN ('claim', 'release', 'renew_leases') THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_service', f.fn);
    ELSIF f.proname = 'unarchivable_keys' THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_admin, idem_console', f.fn);
    ELSE
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_admin', f.fn);
    END IF;
  END LOOP;
END $$;
