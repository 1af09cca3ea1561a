-- Idem store, version 3: the sweeper (DESIGN §3). Applied by `idemctl migrate` inside one
-- transaction; every object is created with CREATE OR REPLACE / IF NOT EXISTS.
--
-- Each function is one statement: it locks its batch with FOR UPDATE SKIP LOCKED, so several
-- sweepers running at once each take different rows and never wait for one another. A batch
-- walks an index from its oldest end (keys by expires_at, archive by purge_after; events by
-- their BRIN time ranges) and stops after p_limit rows, so its cost does not depend on the size
-- of the tables.

-- Moves up to p_limit expired keys from idem.keys to idem.key_archive (archived_by
-- 'sweeper'). A key is expired when expires_at <= now(); a processing key whose lease is still
-- valid is left alone (its executor is alive and will complete it). purge_after is
-- archived_at + the tier's archive retention: p_retentions[i] for p_tiers[i], else
-- p_default_retention. Returns the number of keys archived.
--
-- The archive's primary key includes the generation, so archiving never overwrites an earlier
-- generation; a key whose generation is already archived makes the batch fail loudly rather
-- than be dropped (a claim that starts a key again must number it after the archive).
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

COMMENT ON FUNCTION idem.sweep_archive(integer, text[], interval[], interval) IS
  'Archives up to p_limit expired keys (not processing rows with a valid lease); SKIP LOCKED; returns the count.';

-- Deletes up to p_limit archived generations whose purge_after has passed. Returns the count.
CREATE OR REPLACE FUNCTION idem.purge_archive(p_limit integer)
RETURNS integer
LANGUAGE sql
AS $$
  WITH victims AS (
    SELECT a.tenant, a.endpoint, a.idem_key, a.generation
      FROM idem.key_archive a
     WHERE a.purge_after <= now()
     ORDER BY a.purge_after
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), purged AS (
    DELETE FROM idem.key_archive a
     USING victims v
     WHERE a.tenant = v.tenant AND a.endpoint = v.endpoint AND a.idem_key = v.idem_key
       AND a.generation = v.generation
    RETURNING 1
  )
  SELECT count(*)::integer FROM purged;
$$;

COMMENT ON FUNCTION idem.purge_archive(integer) IS
  'Deletes up to p_limit archived generations past purge_after; SKIP LOCKED; returns the count.';

-- Deletes up to p_limit events older than p_older_than (the longest archive retention of any
-- tier). An event stays while the generation it belongs to is still stored, live or archived,
-- so the trace never disappears before the record it explains. Returns the count.
-- idem.events is append-only with no primary key and a BRIN index on `at` (cheap to append to),
-- so a batch takes the first old rows the scan finds, without ordering them, and deletes them
-- by their physical address (a TID scan): no step of a batch reads the whole table.
CREATE OR REPLACE FUNCTION idem.purge_events(p_limit integer, p_older_than interval)
RETURNS integer
LANGUAGE sql
AS $$
  WITH victims AS (
    SELECT e.ctid AS tid
      FROM idem.events e
     WHERE e.at < now() - p_older_than
       AND NOT EXISTS (SELECT 1 FROM idem.keys k
                        WHERE k.tenant = e.tenant AND k.endpoint = e.endpoint AND k.idem_key = e.idem_key
                          AND k.generation = e.generation)
       AND NOT EXISTS (SELECT 1 FROM idem.key_archive a
                        WHERE a.tenant = e.tenant AND a.endpoint = e.endpoint AND a.idem_key = e.idem_key
                          AND a.generation = e.generation)
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), purged AS (
    DELETE FROM idem.events e
     WHERE e.ctid = ANY (ARRAY(SELECT v.tid FROM victims v))
    RETURNING 1
  )
  SELECT count(*)::integer FROM purged;
$$;

COMMENT ON FUNCTION idem.purge_events(integer, interval) IS
  'Deletes up to p_limit events older than p_older_than whose generation is no longer stored; SKIP LOCKED.';

-- Explain looks a key up without its scope ("which tenants used key K?"); on the archive,
-- which the hot path never reads, an index on the key alone keeps that lookup cheap.
CREATE INDEX IF NOT EXISTS key_archive_idem_key ON idem.key_archive (idem_key);
