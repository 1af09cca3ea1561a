-- Suspected duplicates across keys (docs/policy.md, "Duplicates across keys"): a client that
-- makes a new key for its retry (an agent, a browser's second click, a mesh retrying on its own)
-- sends the same request under another key. A tier with `cross_key` looks, when it claims a new
-- key, for an execution of the same fingerprint on the same route, tenant and service under
-- another key inside its window.

-- 1. The latest execution of each fingerprint, one row per (service, tenant, route,
--    fingerprint). Written only by tiers with cross_key on, so a tier without it pays nothing.
--    Concurrent claims of one fingerprint queue on this row: of two hedged requests sent at once,
--    the second sees the first.
CREATE TABLE IF NOT EXISTS idem.recent_fingerprints (
    service     text        NOT NULL,
    tenant      text        NOT NULL,
    endpoint    text        NOT NULL,
    fingerprint bytea       NOT NULL,
    idem_key    text        NOT NULL,
    seen_at     timestamptz NOT NULL,
    forget_at   timestamptz NOT NULL,   -- seen_at + the tier's window: the sweeper deletes it after
    PRIMARY KEY (service, tenant, endpoint, fingerprint)
);
CREATE INDEX IF NOT EXISTS recent_fingerprints_forget_at ON idem.recent_fingerprints (forget_at);

-- 2. The trace: a match is an event that names both keys. `related_key` is the earlier key.
ALTER TABLE idem.events ADD COLUMN IF NOT EXISTS related_key text;
ALTER TABLE idem.events
  DROP CONSTRAINT IF EXISTS events_outcome_check,
  ADD CONSTRAINT events_outcome_check CHECK (outcome IN (
    'executed', 'executed_after_expiry', 'lease_takeover', 'replayed', 'conflict', 'mismatch',
    'rejected_expired', 'released', 'lease_lost', 'outcome_unknown',
    'observed_key_missing', 'observed_key_malformed', 'observed_replayed', 'observed_conflict',
    'observed_mismatch', 'observed_rejected_expired', 'observed_refused',
    'duplicate_observed', 'duplicate_confirmed', 'duplicate_held', 'duplicate_rejected')) NOT VALID;
-- The console's "suspected duplicates" list reads these rows only.
CREATE INDEX IF NOT EXISTS events_related ON idem.events (at DESC) WHERE related_key IS NOT NULL;

-- 3. A fresh claim on a tier with cross_key: the key is claimed as kFreshClaimSql claims it, then
--    the fingerprint's latest execution is looked up under a row lock. A match is another key's
--    execution since now() - p_window. When the mode blocks (hold, reject) and the client did not
--    confirm, the claim is undone (the key stays free for a confirmed retry) and the earlier
--    execution stays the latest; otherwise this key becomes the latest.
--    claimed = false and matched_key NULL: the key has a live row or history (idem.claim decides).
CREATE OR REPLACE FUNCTION idem.claim_fresh_checked(
    p_tenant text, p_endpoint text, p_key text, p_service text, p_fingerprint bytea, p_tier text,
    p_policy_version integer, p_ttl interval, p_lease interval, p_request_id text,
    p_window interval, p_blocks boolean, p_confirmed boolean)
RETURNS TABLE (claimed boolean, generation integer, expires_at timestamptz, lease_token uuid,
               lease_until timestamptz, matched_key text, matched_at timestamptz,
               matched_state text, matched_status integer, matched_resource text, db_now timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, idem, pg_temp
AS $$
DECLARE
  v_prev_key text;
  v_prev_at timestamptz;
  v_match boolean := false;
BEGIN
  db_now := now();
  INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, service, generation, tier, policy_version, fingerprint,
                              state, lease_token, lease_until, request_id, expires_at)
  SELECT p_tenant, p_endpoint, p_key, p_service, 1, p_tier, p_policy_version, p_fingerprint, 'processing',
         gen_random_uuid(), now() + p_lease, p_request_id, greatest(now() + p_ttl, now() + p_lease + interval '1 second')
   WHERE NOT EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = p_tenant AND a.endpoint = p_endpoint
                        AND a.idem_key = p_key AND a.service = p_service)
  ON CONFLICT DO NOTHING
  RETURNING k.generation, k.expires_at, k.lease_token, k.lease_until
       INTO generation, expires_at, lease_token, lease_until;
  claimed := FOUND;
  IF NOT claimed THEN
    RETURN NEXT;
    RETURN;
  END IF;

  LOOP
    SELECT f.idem_key, f.seen_at INTO v_prev_key, v_prev_at
      FROM idem.recent_fingerprints f
     WHERE f.service = p_service AND f.tenant = p_tenant AND f.endpoint = p_endpoint AND f.fingerprint = p_fingerprint
       FOR UPDATE;
    IF FOUND THEN
      v_match := v_prev_key <> p_key AND v_prev_at > now() - p_window;
      IF v_match AND p_blocks AND NOT p_confirmed THEN
        EXIT;
      END IF;
      UPDATE idem.recent_fingerprints f SET idem_key = p_key, seen_at = now(), forget_at = now() + p_window
       WHERE f.service = p_service AND f.tenant = p_tenant AND f.endpoint = p_endpoint
         AND f.fingerprint = p_fingerprint;
      EXIT;
    END IF;
    INSERT INTO idem.recent_fingerprints (service, tenant, endpoint, fingerprint, idem_key, seen_at, forget_at)
    VALUES (p_service, p_tenant, p_endpoint, p_fingerprint, p_key, now(), now() + p_window)
    ON CONFLICT DO NOTHING;
    EXIT WHEN FOUND;
    -- Another claim of this fingerprint inserted its row meanwhile (and committed: the insert
    -- waited for it): read it under the lock.
  END LOOP;

  IF v_match THEN
    matched_key := v_prev_key;
    matched_at := v_prev_at;
    SELECT k.state, k.resp_status, k.resource_ref INTO matched_state, matched_status, matched_resource
      FROM idem.keys k
     WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = v_prev_key AND k.service = p_service;
    IF p_blocks AND NOT p_confirmed THEN
      -- Not this key's execution: the claim is undone in this transaction, nobody saw it.
      DELETE FROM idem.keys k
       WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service
         AND k.lease_token = claim_fresh_checked.lease_token;
      claimed := false;
      generation := NULL;
      expires_at := NULL;
      lease_token := NULL;
      lease_until := NULL;
    END IF;
  END IF;
  RETURN NEXT;
END $$;

-- 4. A released claim never executed: its fingerprint is no longer "executed under this key".
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
  v_fingerprint bytea;
BEGIN
  DELETE FROM idem.keys k
   WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key AND k.service = p_service
     AND k.state = 'processing' AND k.lease_token = p_lease_token
  RETURNING k.generation, k.tier, k.fingerprint INTO v_gen, v_tier, v_fingerprint;
  IF NOT FOUND THEN RETURN false; END IF;
  DELETE FROM idem.recent_fingerprints f
   WHERE f.service = p_service AND f.tenant = p_tenant AND f.endpoint = p_endpoint
     AND f.fingerprint = v_fingerprint AND f.idem_key = p_key;
  INSERT INTO idem.events (tenant, endpoint, idem_key, service, generation, tier, outcome, status,
                           request_id, detail)
  VALUES (p_tenant, p_endpoint, p_key, p_service, v_gen, v_tier, 'released', p_status, p_request_id, p_reason);
  RETURN true;
END $$;

-- 5. The sweeper forgets fingerprints whose window has passed (idemctl sweep, every round).
CREATE OR REPLACE FUNCTION idem.forget_fingerprints(p_limit integer)
RETURNS integer
LANGUAGE sql
SECURITY DEFINER
SET search_path = pg_catalog, idem, pg_temp
AS $$
  WITH gone AS (
    DELETE FROM idem.recent_fingerprints f
     WHERE (f.service, f.tenant, f.endpoint, f.fingerprint) IN (
       SELECT o.service, o.tenant, o.endpoint, o.fingerprint FROM idem.recent_fingerprints o
        WHERE o.forget_at < now() ORDER BY o.forget_at LIMIT p_limit
          FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT count(*)::integer FROM gone;
$$;

-- 6. Privileges as in 0015: the service claims and releases; the admin sweeps; the console reads.
DO $$
DECLARE
  f record;
  v_roles boolean := (SELECT count(*) FROM pg_roles
                       WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) = 3;
BEGIN
  IF v_roles THEN
    GRANT SELECT ON idem.recent_fingerprints TO idem_service, idem_console, idem_admin;
    GRANT INSERT, UPDATE, DELETE ON idem.recent_fingerprints TO idem_service;
  END IF;
  FOR f IN SELECT p.oid::regprocedure AS fn, p.proname FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace
              AND p.proname IN ('claim_fresh_checked', 'release', 'forget_fingerprints') LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.fn);
    CONTINUE WHEN NOT v_roles;
    IF f.proname = 'forget_fingerprints' THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_admin', f.fn);
    ELSE
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_service', f.fn);
    END IF;
  END LOOP;
END $$;
