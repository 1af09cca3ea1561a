-- The hot path as server-side functions: a claim, a replay, a completion and a release are
-- each one statement, so one network round trip, and PgBouncer's transaction mode is fine.
-- now() (the database's clock) is the only clock.

-- Decisions: execute | execute_after_expiry | takeover | replay | conflict | mismatch |
-- rejected_expired. Only the executing decisions write; replay/conflict/mismatch only read.
CREATE FUNCTION idem.claim(
    p_tenant text, p_endpoint text, p_key text, p_fingerprint bytea, p_tier text,
    p_policy_version integer, p_ttl interval, p_lease interval, p_on_expired text,
    p_request_id text, p_archive_retention interval)
RETURNS TABLE (decision text, generation integer, expires_at timestamptz, lease_token uuid,
               lease_until timestamptz, resp_status integer, resp_headers jsonb, resp_body bytea,
               retry_after_ms bigint, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  r idem.keys%ROWTYPE;
  v_token uuid;
  v_prev integer;
BEGIN
  -- A few rounds cover the races: an insert that lost to a concurrent insert, a takeover
  -- that lost to another takeover. Each statement sees what committed before it started.
  FOR attempt IN 1..8 LOOP
    SELECT * INTO r FROM idem.keys k
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key;

    IF NOT FOUND THEN
      -- A swept key leaves archived generations: a request now is a retry after expiry.
      SELECT max(a.generation) INTO v_prev FROM idem.key_archive a
       WHERE a.tenant = p_tenant AND a.endpoint = p_endpoint AND a.idem_key = p_key;
      IF v_prev IS NOT NULL AND p_on_expired = 'reject' THEN
        RETURN QUERY SELECT 'rejected_expired'::text, v_prev, NULL::timestamptz, NULL::uuid,
          NULL::timestamptz, NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, NULL::timestamptz;
        RETURN;
      END IF;
      v_token := gen_random_uuid();
      INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, generation, tier, policy_version,
                                  fingerprint, state, lease_token, lease_until, request_id, expires_at)
      VALUES (p_tenant, p_endpoint, p_key, coalesce(v_prev, 0) + 1, p_tier, p_policy_version,
              p_fingerprint, 'processing', v_token, now() + p_lease, p_request_id, now() + p_ttl)
      ON CONFLICT DO NOTHING;
      IF FOUND THEN
        RETURN QUERY SELECT CASE WHEN v_prev IS NULL THEN 'execute' ELSE 'execute_after_expiry' END,
          coalesce(v_prev, 0) + 1, now() + p_ttl, v_token, now() + p_lease,
          NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, now();
        RETURN;
      END IF;
      CONTINUE;  -- a concurrent request inserted first: decide against its row
    END IF;

    IF r.expires_at <= now() THEN
      IF p_on_expired = 'reject' THEN
        RETURN QUERY SELECT 'rejected_expired'::text, r.generation, r.expires_at, NULL::uuid,
          NULL::timestamptz, NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, r.created_at;
        RETURN;
      END IF;
      -- Lock before archiving so a late completion cannot land between the copy and the reset.
      SELECT * INTO r FROM idem.keys k
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key FOR UPDATE;
      IF NOT FOUND OR r.expires_at > now() THEN CONTINUE; END IF;
      INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version,
          fingerprint, state, resp_status, resp_headers, resp_body, resource_ref, request_id,
          created_at, completed_at, expires_at, archived_at, archived_by, purge_after)
      VALUES (r.tenant, r.endpoint, r.idem_key, r.generation, r.tier, r.policy_version,
          r.fingerprint, r.state, r.resp_status, r.resp_headers, r.resp_body, r.resource_ref,
          r.request_id, r.created_at, r.completed_at, r.expires_at, now(), 'reuse',
          now() + p_archive_retention)
      ON CONFLICT DO NOTHING;
      v_token := gen_random_uuid();
      UPDATE idem.keys k SET generation = r.generation + 1, tier = p_tier,
          policy_version = p_policy_version, fingerprint = p_fingerprint, state = 'processing',
          lease_token = v_token, lease_until = now() + p_lease, resp_status = NULL,
          resp_headers = NULL, resp_body = NULL, resource_ref = NULL, request_id = p_request_id,
          created_at = now(), completed_at = NULL, expires_at = now() + p_ttl
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key;
      RETURN QUERY SELECT 'execute_after_expiry'::text, r.generation + 1, now() + p_ttl, v_token,
        now() + p_lease, NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, now();
      RETURN;
    END IF;

    -- Same key, different payload: 422, and it takes precedence over 409.
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

    -- The owner's lease ran out (it died or hung): take over, unless someone else just did.
    v_token := gen_random_uuid();
    UPDATE idem.keys k SET lease_token = v_token, lease_until = now() + p_lease,
        request_id = p_request_id
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key
       AND k.state = 'processing' AND k.lease_token IS NOT DISTINCT FROM r.lease_token;
    IF FOUND THEN
      INSERT INTO idem.events (tenant, endpoint, idem_key, generation, tier, outcome, fingerprint,
                               request_id, detail)
      VALUES (p_tenant, p_endpoint, p_key, r.generation, p_tier, 'lease_takeover', p_fingerprint,
              p_request_id, 'lease expired at ' || r.lease_until::text);
      RETURN QUERY SELECT 'takeover'::text, r.generation, r.expires_at, v_token, now() + p_lease,
        NULL::integer, NULL::jsonb, NULL::bytea, NULL::bigint, r.created_at;
      RETURN;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'idem.claim: key % kept changing under contention', p_key
    USING ERRCODE = '40001';
END $$;

-- Stores the response of an execution and records it in the trace, in one transaction.
-- Returns no row when the lease was lost (taken over): the caller must not report success.
CREATE FUNCTION idem.complete(
    p_tenant text, p_endpoint text, p_key text, p_lease_token uuid, p_status integer,
    p_headers jsonb, p_body bytea, p_resource_ref text, p_outcome text, p_latency_ms double precision,
    p_request_id text)
RETURNS TABLE (generation integer, expires_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  v_gen integer;
  v_expires timestamptz;
  v_tier text;
  v_fp bytea;
BEGIN
  UPDATE idem.keys k SET state = 'done', resp_status = p_status, resp_headers = p_headers,
      resp_body = p_body, resource_ref = p_resource_ref, completed_at = now(),
      lease_token = NULL, lease_until = NULL
   WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key
     AND k.state = 'processing' AND k.lease_token = p_lease_token
  RETURNING k.generation, k.expires_at, k.tier, k.fingerprint INTO v_gen, v_expires, v_tier, v_fp;
  IF NOT FOUND THEN
    INSERT INTO idem.events (tenant, endpoint, idem_key, outcome, status, latency_ms, request_id, detail)
    VALUES (p_tenant, p_endpoint, p_key, 'lease_lost', p_status, p_latency_ms, p_request_id,
            'completed after the lease was taken over; response not stored');
    RETURN;
  END IF;
  INSERT INTO idem.events (tenant, endpoint, idem_key, generation, tier, outcome, fingerprint,
                           status, latency_ms, request_id, detail)
  VALUES (p_tenant, p_endpoint, p_key, v_gen, v_tier, p_outcome, v_fp, p_status, p_latency_ms,
          p_request_id, p_resource_ref);
  RETURN QUERY SELECT v_gen, v_expires;
END $$;

-- For completions that commit with side effects (a ledger row): a lost lease aborts the whole
-- transaction, so the side effects cannot stand without their key.
CREATE FUNCTION idem.complete_strict(
    p_tenant text, p_endpoint text, p_key text, p_lease_token uuid, p_status integer,
    p_headers jsonb, p_body bytea, p_resource_ref text, p_outcome text, p_latency_ms double precision,
    p_request_id text)
RETURNS TABLE (generation integer, expires_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM idem.complete(p_tenant, p_endpoint, p_key, p_lease_token, p_status,
      p_headers, p_body, p_resource_ref, p_outcome, p_latency_ms, p_request_id);
  IF NOT FOUND THEN
    RAISE EXCEPTION 'idempotency lease on key % was taken over; completion refused', p_key
      USING ERRCODE = 'IDL01';
  END IF;
END $$;

-- Gives a claim back when the request failed before execution started (validation, auth,
-- rate limit): nothing is stored, a retry runs normally.
CREATE FUNCTION idem.release(
    p_tenant text, p_endpoint text, p_key text, p_lease_token uuid, p_status integer,
    p_request_id text, p_reason text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_gen integer;
  v_tier text;
BEGIN
  DELETE FROM idem.keys k
   WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key
     AND k.state = 'processing' AND k.lease_token = p_lease_token
  RETURNING k.generation, k.tier INTO v_gen, v_tier;
  IF NOT FOUND THEN RETURN false; END IF;
  INSERT INTO idem.events (tenant, endpoint, idem_key, generation, tier, outcome, status,
                           request_id, detail)
  VALUES (p_tenant, p_endpoint, p_key, v_gen, v_tier, 'released', p_status, p_request_id, p_reason);
  RETURN true;
END $$;

-- Roles exist only when the migrating user could create them (0001).
DO $$
BEGIN
  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) = 3 THEN
    GRANT USAGE ON SCHEMA idem TO idem_service, idem_console, idem_admin;
    GRANT SELECT ON ALL TABLES IN SCHEMA idem TO idem_console, idem_service, idem_admin;
    GRANT INSERT, UPDATE, DELETE ON idem.keys, idem.key_archive TO idem_service, idem_admin;
    GRANT INSERT ON idem.events, idem.policies TO idem_service, idem_admin;
    GRANT DELETE ON idem.events TO idem_admin;
    GRANT EXECUTE ON FUNCTION idem.claim, idem.complete, idem.complete_strict, idem.release TO idem_service, idem_admin;
  END IF;
END $$;
