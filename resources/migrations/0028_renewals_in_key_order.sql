-- Lease renewals lock their keys in key order (byte order, COLLATE "C"): the order in which every
-- completion batch locks them (the library sends a batch's keys sorted so; core/store/keystore.h,
-- locksBefore). 0025's idem.renew_leases was a plain UPDATE ... FROM unnest, whose plan walks the
-- in-flight index (keys_processing: lease_until order), so a renewal and a completion batch could
-- each hold a key the other waited for; PostgreSQL breaks such a cycle only after
-- deadlock_timeout (1 s), failing one of the two statements. The rows are now locked first, in
-- order, then updated. Same signature, result and grants.
CREATE OR REPLACE FUNCTION idem.renew_leases(
    p_tenants text[], p_endpoints text[], p_keys text[], p_tokens uuid[], p_leases interval[], p_services text[])
RETURNS TABLE (lease_token uuid, lease_until timestamptz, expires_at timestamptz)
LANGUAGE sql
SET search_path = pg_catalog, idem, pg_temp
AS $$
  WITH h AS (
    SELECT * FROM unnest(p_tenants, p_endpoints, p_keys, p_tokens, p_leases, p_services)
                  AS h(tenant, endpoint, idem_key, token, lease, service)
  ), locked AS (
    SELECT k.tenant, k.endpoint, k.idem_key, k.service, h.lease
      FROM idem.keys k
      JOIN h ON k.tenant = h.tenant AND k.endpoint = h.endpoint AND k.idem_key = h.idem_key
            AND k.service = h.service
     WHERE k.state = 'processing' AND k.lease_token = h.token
     ORDER BY k.tenant COLLATE "C", k.endpoint COLLATE "C", k.idem_key COLLATE "C", k.service COLLATE "C"
       FOR UPDATE OF k
  )
  UPDATE idem.keys k
     SET lease_until = now() + l.lease,
         expires_at = greatest(k.expires_at, now() + l.lease + interval '1 second')
    FROM locked l
   WHERE k.tenant = l.tenant AND k.endpoint = l.endpoint AND k.idem_key = l.idem_key AND k.service = l.service
  RETURNING k.lease_token, k.lease_until, k.expires_at;
$$;
