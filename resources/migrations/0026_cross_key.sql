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
    idem_key    text        NOT NULL,   -- the latest key this request ran under
    seen_at     timestamptz NOT NULL,   -- when that key claimed it
    forget_at   timestamptz NOT NULL,   -- seen_at + the tier's window: the sweeper deletes it after
    claimed_as  text        NOT NULL,   -- the claim's mode: observe, hold, reject, or confirmed (hold, confirmed)
    prev_key    text,                   -- the key before, as the last claim found it: the match it reports
    prev_at     timestamptz,
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

-- 3. The claim itself is one statement of the library's (core/store/crosskeyclaim.cpp): it
--    upserts the fingerprint's row and inserts the key only if the row now names it, in one
--    statement and one commit, so a held request never leaves a claimed key behind.

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
              AND p.proname IN ('release', 'forget_fingerprints') LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.fn);
    CONTINUE WHEN NOT v_roles;
    IF f.proname = 'forget_fingerprints' THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_admin', f.fn);
    ELSE
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_service', f.fn);
    END IF;
  END LOOP;
END $$;
