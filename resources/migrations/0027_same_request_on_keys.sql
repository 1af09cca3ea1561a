-- Duplicates across keys, looked up on the key's own row (docs/policy.md, "Duplicates across
-- keys"). 0026 kept a second row per request in idem.recent_fingerprints, upserted by every new
-- key of a tier with cross_key: a heap row, two index entries and an upsert per key made the
-- new-key path 20-25 % slower with concurrent clients (tests/bench/RESULTS.md). Here the key's
-- own row says whether it is the latest execution of its request, and a unique partial index
-- makes that true of one row per (service, tenant, route, fingerprint):
--  - a new key of a tier with cross_key is claimed by the plain INSERT, with same_request_latest
--    set. No other row of the same request holds the mark: it is claimed, at the cost of one
--    index entry. Another does: the INSERT does nothing (ON CONFLICT DO NOTHING covers every
--    unique index), and idem.claim_same_request below decides. A claim of the same request in
--    flight elsewhere holds the index entry: this INSERT waits for its commit, then sees it, so
--    two hedged requests sent at once cannot both miss each other;
--  - the mark stays on a row until a later claim of the same request takes it (observe, a
--    confirmed resend, or the window passed) or the row is archived or released. Only
--    generation 1 is marked: a key re-executed after its expiry (idem.claim) changes its
--    fingerprint and was never looked up, so it takes no part.
ALTER TABLE idem.keys ADD COLUMN IF NOT EXISTS same_request_latest boolean;
CREATE UNIQUE INDEX IF NOT EXISTS keys_same_request ON idem.keys (fingerprint, service, tenant, endpoint)
  WHERE same_request_latest AND generation = 1;  -- the fingerprint first: comparisons end there

-- 1. A claim of a tier with cross_key that the plain INSERT did not make: the key has a live
--    row or history ('alone': idem.claim decides, as for any key), or another key holds the
--    request's mark. Inside the window, hold and reject claim nothing ('held', naming that key);
--    otherwise (observe, a confirmed resend, the window passed) the mark moves to the new key,
--    which is claimed ('execute', naming the match when there was one). Each statement sees
--    the commits before it (plpgsql, read committed): a mark moved meanwhile is looked up again.
CREATE OR REPLACE FUNCTION idem.claim_same_request(
    p_tenant text, p_endpoint text, p_key text, p_fingerprint bytea, p_tier text,
    p_policy_version integer, p_ttl interval, p_lease interval, p_request_id text, p_service text,
    p_window interval, p_mode text)
RETURNS TABLE (decision text, generation integer, expires_at timestamptz, lease_token uuid,
               lease_until timestamptz, matched_key text, matched_at timestamptz, matched_state text,
               matched_status integer, matched_resource text, db_now timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, idem, pg_temp
AS $$
DECLARE
  h record;
  k record;
  v_held boolean;
  v_match boolean;
BEGIN
  FOR attempt IN 1..5 LOOP
    IF EXISTS (SELECT 1 FROM idem.keys x WHERE x.tenant = p_tenant AND x.endpoint = p_endpoint
                  AND x.idem_key = p_key AND x.service = p_service)
       OR EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = p_tenant AND a.endpoint = p_endpoint
                     AND a.idem_key = p_key AND a.service = p_service) THEN
      RETURN QUERY SELECT 'alone'::text, NULL::integer, NULL::timestamptz, NULL::uuid, NULL::timestamptz,
                          NULL::text, NULL::timestamptz, NULL::text, NULL::integer, NULL::text, now();
      RETURN;
    END IF;
    SELECT x.idem_key, x.created_at, x.state, x.resp_status, x.resource_ref INTO h
      FROM idem.keys x
     WHERE x.service = p_service AND x.tenant = p_tenant AND x.endpoint = p_endpoint
       AND x.fingerprint = p_fingerprint AND x.same_request_latest AND x.generation = 1
       FOR UPDATE;
    v_held := FOUND;
    v_match := v_held AND h.created_at > now() - p_window;
    IF v_match AND p_mode IN ('hold', 'reject') THEN
      RETURN QUERY SELECT 'held'::text, NULL::integer, NULL::timestamptz, NULL::uuid, NULL::timestamptz,
                          h.idem_key, h.created_at, h.state, h.resp_status, h.resource_ref, now();
      RETURN;
    END IF;
    IF v_held THEN
      UPDATE idem.keys x SET same_request_latest = NULL
       WHERE x.tenant = p_tenant AND x.endpoint = p_endpoint AND x.idem_key = h.idem_key
         AND x.service = p_service;
    END IF;
    INSERT INTO idem.keys AS x (tenant, endpoint, idem_key, service, generation, tier, policy_version,
                                fingerprint, state, lease_token, lease_until, request_id, expires_at,
                                same_request_latest)
    VALUES (p_tenant, p_endpoint, p_key, p_service, 1, p_tier, p_policy_version, p_fingerprint, 'processing',
            gen_random_uuid(), now() + p_lease, p_request_id,
            greatest(now() + p_ttl, now() + p_lease + interval '1 second'), true)
    ON CONFLICT DO NOTHING
    RETURNING x.generation, x.expires_at, x.lease_token, x.lease_until INTO k;
    IF FOUND THEN
      IF v_match THEN
        RETURN QUERY SELECT 'execute'::text, k.generation, k.expires_at, k.lease_token, k.lease_until,
                            h.idem_key, h.created_at, h.state, h.resp_status, h.resource_ref, now();
      ELSE
        RETURN QUERY SELECT 'execute'::text, k.generation, k.expires_at, k.lease_token, k.lease_until,
                            NULL::text, NULL::timestamptz, NULL::text, NULL::integer, NULL::text, now();
      END IF;
      RETURN;
    END IF;
    -- Another claim of this key, or of this request, committed between our looks: look again.
  END LOOP;
  RAISE EXCEPTION 'the claim of % kept meeting concurrent claims of the same request', p_key
    USING ERRCODE = '40001';
END $$;

-- 2. Release (0026's) without the fingerprint row: the released key's row, and its mark, go.
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

-- 3. 0026's table and its sweep go: nothing writes them any more. (The matches it found are in
--    idem.events, with related_key, and stay.)
DROP FUNCTION IF EXISTS idem.forget_fingerprints(integer);
DROP TABLE IF EXISTS idem.recent_fingerprints;

-- 4. Privileges as in 0015: the service claims and releases.
DO $$
DECLARE
  f record;
  v_roles boolean := (SELECT count(*) FROM pg_roles
                       WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) = 3;
BEGIN
  FOR f IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace
              AND p.proname IN ('claim_same_request', 'release') LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.fn);
    CONTINUE WHEN NOT v_roles;
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_service', f.fn);
  END LOOP;
END $$;
