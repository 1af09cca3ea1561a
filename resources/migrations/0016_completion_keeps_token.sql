-- A completion whose COMMIT the server carried out but whose answer never reached the client
-- (the connection died after the commit: a restart, a failover, a terminated backend while
-- the commit waited for a synchronous standby) is retried. The retry finds the key done and,
-- before this version, could not tell its own committed completion from a takeover: it
-- answered 409 "not committed" (with side statements) or traced a false lease_lost, for a
-- payment that had been committed. A done row now keeps the lease token of the execution that
-- completed it, so the store can answer "yours, already stored" (KeyStore::complete).
-- lease_until is still cleared: a done key holds no lease.
CREATE OR REPLACE FUNCTION idem.complete_or_abort(
    p_tenant text, p_endpoint text, p_key text, p_lease_token uuid, p_status integer,
    p_headers jsonb, p_body bytea, p_resource_ref text)
RETURNS TABLE (generation integer, expires_ms bigint, now_ms bigint)
LANGUAGE plpgsql
-- CREATE OR REPLACE resets a function's settings: the pinned search_path of 0015 is restated.
SET search_path = pg_catalog, idem, pg_temp
AS $$
BEGIN
  RETURN QUERY
  UPDATE idem.keys k SET state = 'done', resp_status = p_status, resp_headers = p_headers,
      resp_body = p_body, resource_ref = p_resource_ref, completed_at = now(), lease_until = NULL
   WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key
     AND k.state = 'processing' AND k.lease_token = p_lease_token
  RETURNING k.generation, (extract(epoch FROM k.expires_at) * 1000)::bigint,
            (extract(epoch FROM now()) * 1000)::bigint;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'idempotency lease on key % was taken over; completion refused', p_key
      USING ERRCODE = 'IDL01';
  END IF;
END $$;
