-- An execution's `executed` trace row leaves the completion's transaction and goes through the
-- trace writer's batches, like every other decision: writing it with the key cost ~10 % of the
-- new-key rate (pgbench on Idem's statements, 8 clients). The key is the durable record that
-- the operation ran (a done generation ran at least once, which explain already counts on);
-- what a crash can lose is the trace row's time, latency and request id (README, "Store").
--
-- For completions that commit with side effects (a ledger row), in one pipeline with them:
-- stores the response and ends the lease; a lost lease aborts the whole transaction (IDL01),
-- so the side effects cannot stand without their key. idem.complete and idem.complete_strict
-- (0002) stay for binaries of schema 12 and older, which still write the row themselves.
CREATE OR REPLACE FUNCTION idem.complete_or_abort(
    p_tenant text, p_endpoint text, p_key text, p_lease_token uuid, p_status integer,
    p_headers jsonb, p_body bytea, p_resource_ref text)
RETURNS TABLE (generation integer, expires_ms bigint, now_ms bigint)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
  UPDATE idem.keys k SET state = 'done', resp_status = p_status, resp_headers = p_headers,
      resp_body = p_body, resource_ref = p_resource_ref, completed_at = now(),
      lease_token = NULL, lease_until = NULL
   WHERE k.tenant = p_tenant AND k.endpoint = p_endpoint AND k.idem_key = p_key
     AND k.state = 'processing' AND k.lease_token = p_lease_token
  RETURNING k.generation, (extract(epoch FROM k.expires_at) * 1000)::bigint,
            (extract(epoch FROM now()) * 1000)::bigint;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'idempotency lease on key % was taken over; completion refused', p_key
      USING ERRCODE = 'IDL01';
  END IF;
END $$;

DO $$
BEGIN
  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('idem_service', 'idem_admin')) = 2 THEN
    GRANT EXECUTE ON FUNCTION idem.complete_or_abort TO idem_service, idem_admin;
  END IF;
END $$;
