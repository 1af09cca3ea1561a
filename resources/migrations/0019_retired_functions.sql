-- Idem store, version 19: one home for the key store's SQL (core/store/keysql.h).
--
-- 1. Retired functions go. idem.complete and idem.complete_strict (0002) wrote the completion
--    and its trace row in one function; no binary since schema 13 calls them (0013).
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace AND p.proname IN ('complete', 'complete_strict') LOOP
    EXECUTE format('DROP FUNCTION %s', f);
  END LOOP;
END $$;

-- 2. The completion's UPDATE now lives in keysql.h only; with side effects it runs in a CTE
--    that calls this function when the UPDATE found no row, so the lease lost aborts the
--    transaction (IDL01) and the side effects with it. Nothing but the error lives here.
--    VOLATILE: never folded or called ahead of the CASE that guards it.
CREATE OR REPLACE FUNCTION idem.refuse_completion(p_key text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'idempotency lease on key % was taken over; completion refused', p_key
    USING ERRCODE = 'IDL01';
END $$;
ALTER FUNCTION idem.refuse_completion(text) SET search_path = pg_catalog, idem, pg_temp;
REVOKE EXECUTE ON FUNCTION idem.refuse_completion(text) FROM PUBLIC;

--    idem.complete_or_abort (0013), which held the same UPDATE, stays while binaries of schemas
--    13 to 15 may still run: a binary serves any schema at least its own, so during a rolling
--    upgrade they call it. A later migration drops it.

-- 3. Grants as in 0015: the service completes keys; nobody else calls it.
DO $$
BEGIN
  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) <> 3 THEN
    RETURN;
  END IF;
  GRANT EXECUTE ON FUNCTION idem.refuse_completion(text) TO idem_service;
END $$;
