-- Idem store, version 14: the races that could run a key twice (README, "Rules that keep one
-- execution").
--
-- 1. A live generation is always newer than every archived one. The claim for a key this
--    process has not seen is one INSERT … WHERE NOT EXISTS (archive); in READ COMMITTED that
--    check runs on the statement's snapshot, so a sweeper archiving the same key at that moment
--    is invisible to it: the INSERT waits for the sweeper's DELETE, then writes generation 1
--    again next to the archived generation 1. The constraint trigger below looks again after the
--    row is written, on a fresh snapshot (a plpgsql statement in READ COMMITTED takes one), which
--    sees the sweeper's committed archive row; the claim fails with IDA01 and the caller decides
--    through idem.claim, which numbers after the archive. Costs one index probe per new key.
CREATE OR REPLACE FUNCTION idem.keys_generation_after_archive()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_archived integer;
BEGIN
  SELECT max(a.generation) INTO v_archived FROM idem.key_archive a
   WHERE a.tenant = NEW.tenant AND a.endpoint = NEW.endpoint AND a.idem_key = NEW.idem_key;
  IF v_archived IS NOT NULL AND v_archived >= NEW.generation THEN
    RAISE EXCEPTION 'key % would start generation % but generation % is archived', NEW.idem_key,
        NEW.generation, v_archived
      USING ERRCODE = 'IDA01';
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS keys_generation_after_archive ON idem.keys;
CREATE CONSTRAINT TRIGGER keys_generation_after_archive
  AFTER INSERT OR UPDATE OF generation ON idem.keys
  FOR EACH ROW EXECUTE FUNCTION idem.keys_generation_after_archive();

-- 2. The full decision, as in 0002 with three changes:
--    - lease beats expiry: a processing key under a valid lease is never expired (its executor is
--      alive and renewing it); a retry gets 409 or waits, never a second execution;
--    - the key is honoured at least one second past the end of its lease (the resolution of
--      Retry-After, which a 409 rounds up): a client that waits out a 409's Retry-After finds
--      the key, never a lapsed one. Every write of lease_until pushes expires_at to that bound;
--    - archiving on reuse never drops a generation: a clash on the archive's key is an error,
--      not ON CONFLICT DO NOTHING.
CREATE OR REPLACE FUNCTION idem.claim(
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
  v_expires timestamptz := greatest(now() + p_ttl, now() + p_lease + interval '1 second');
BEGIN
  FOR attempt IN 1..8 LOOP
    SELECT * INTO r FROM idem.keys k
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key;

    IF NOT FOUND THEN
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
      -- Lock before archiving so a late completion or renewal cannot land between the copy and
      -- the reset; then look again, since it may have landed before the lock.
      SELECT * INTO r FROM idem.keys k
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key FOR UPDATE;
      IF NOT FOUND OR r.expires_at > now() OR (r.state = 'processing' AND r.lease_until > now()) THEN
        CONTINUE;
      END IF;
      INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version,
          fingerprint, state, resp_status, resp_headers, resp_body, resource_ref, request_id,
          created_at, completed_at, expires_at, archived_at, archived_by, purge_after)
      VALUES (r.tenant, r.endpoint, r.idem_key, r.generation, r.tier, r.policy_version,
          r.fingerprint, r.state, r.resp_status, r.resp_headers, r.resp_body, r.resource_ref,
          r.request_id, r.created_at, r.completed_at, r.expires_at, now(), 'reuse',
          now() + p_archive_retention);
      v_token := gen_random_uuid();
      UPDATE idem.keys k SET generation = r.generation + 1, tier = p_tier,
          policy_version = p_policy_version, fingerprint = p_fingerprint, state = 'processing',
          lease_token = v_token, lease_until = now() + p_lease, resp_status = NULL,
          resp_headers = NULL, resp_body = NULL, resource_ref = NULL, request_id = p_request_id,
          created_at = now(), completed_at = NULL, expires_at = v_expires
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key;
      RETURN QUERY SELECT 'execute_after_expiry'::text, r.generation + 1, v_expires, v_token,
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

    -- The owner stopped renewing its lease (it died or lost the store): take over, unless
    -- someone else just did. The key lives at least as long as the new lease.
    v_token := gen_random_uuid();
    UPDATE idem.keys k SET lease_token = v_token, lease_until = now() + p_lease,
        request_id = p_request_id,
        expires_at = greatest(k.expires_at, now() + p_lease + interval '1 second')
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key
       AND k.state = 'processing' AND k.lease_token IS NOT DISTINCT FROM r.lease_token
    RETURNING k.expires_at INTO r.expires_at;
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

-- 3. Lease renewal: the executor of a key renews its lease while it runs, so a request that runs
--    longer than the lease (or the TTL) is never taken over or expired while its process is
--    alive. One statement renews every lease a process holds (arrays of the same length); a
--    row whose token changed (taken over, completed, released) is not touched. Returns the
--    leases renewed, with their new lease end and expiry.
CREATE OR REPLACE FUNCTION idem.renew_leases(
    p_tenants text[], p_endpoints text[], p_keys text[], p_tokens uuid[], p_leases interval[])
RETURNS TABLE (lease_token uuid, lease_until timestamptz, expires_at timestamptz)
LANGUAGE sql AS $$
  UPDATE idem.keys k
     SET lease_until = now() + h.lease,
         expires_at = greatest(k.expires_at, now() + h.lease + interval '1 second')
    FROM unnest(p_tenants, p_endpoints, p_keys, p_tokens, p_leases) AS h(tenant, endpoint, idem_key, token, lease)
   WHERE k.tenant = h.tenant AND k.endpoint = h.endpoint AND k.idem_key = h.idem_key
     AND k.state = 'processing' AND k.lease_token = h.token
  RETURNING k.lease_token, k.lease_until, k.expires_at;
$$;

-- 4. One bad row never stops the sweeper: a live row whose generation is already archived (left
--    by the race in 1 before this version) cannot be archived without dropping one of the two
--    generations. The sweeper leaves such rows live — they are counted by
--    idem.unarchivable_keys() for the operator — and archives every other expired key.
CREATE OR REPLACE FUNCTION idem.sweep_archive(p_limit integer, p_tiers text[], p_retentions interval[],
                                              p_default_retention interval)
RETURNS integer
LANGUAGE sql
AS $$
  WITH victims AS (
    SELECT k.tenant, k.endpoint, k.idem_key
      FROM idem.keys k
     WHERE k.expires_at <= now()
       AND (k.state = 'done' OR k.lease_until IS NULL OR k.lease_until <= now())
       AND NOT EXISTS (SELECT 1 FROM idem.key_archive a
                        WHERE a.tenant = k.tenant AND a.endpoint = k.endpoint AND a.idem_key = k.idem_key
                          AND a.generation >= k.generation)
     ORDER BY k.expires_at
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), moved AS (
    DELETE FROM idem.keys k
     USING victims v
     WHERE k.tenant = v.tenant AND k.endpoint = v.endpoint AND k.idem_key = v.idem_key
    RETURNING k.*
  ), archived AS (
    INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint,
                                  state, resp_status, resp_headers, resp_body, resource_ref, request_id,
                                  created_at, completed_at, expires_at, archived_at, archived_by, purge_after)
    SELECT m.tenant, m.endpoint, m.idem_key, m.generation, m.tier, m.policy_version, m.fingerprint,
           m.state, m.resp_status, m.resp_headers, m.resp_body, m.resource_ref, m.request_id,
           m.created_at, m.completed_at, m.expires_at, now(), 'sweeper',
           now() + coalesce((SELECT r.retention
                               FROM unnest(p_tiers, p_retentions) AS r(tier, retention)
                              WHERE r.tier = m.tier
                              LIMIT 1), p_default_retention)
      FROM moved m
    RETURNING 1
  )
  SELECT count(*)::integer FROM archived;
$$;

-- Expired live rows the sweeper must leave alone because their generation is already archived:
-- two executions share one generation number and an operator must look (README, "Store").
CREATE OR REPLACE FUNCTION idem.unarchivable_keys(p_limit integer)
RETURNS TABLE (tenant text, endpoint text, idem_key text, generation integer, archived_generation integer)
LANGUAGE sql STABLE AS $$
  SELECT k.tenant, k.endpoint, k.idem_key, k.generation, a.generation
    FROM idem.keys k
    JOIN LATERAL (SELECT max(x.generation) AS generation FROM idem.key_archive x
                   WHERE x.tenant = k.tenant AND x.endpoint = k.endpoint AND x.idem_key = k.idem_key) a
      ON a.generation >= k.generation
   WHERE k.expires_at <= now()
   ORDER BY k.expires_at
   LIMIT greatest(p_limit, 0);
$$;

DO $$
BEGIN
  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) = 3 THEN
    GRANT EXECUTE ON FUNCTION idem.renew_leases, idem.keys_generation_after_archive TO idem_service, idem_admin;
    GRANT EXECUTE ON FUNCTION idem.unarchivable_keys TO idem_admin, idem_console;
  END IF;
END $$;
