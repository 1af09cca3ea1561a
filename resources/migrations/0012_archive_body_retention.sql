-- A tier's body_retention (policy file): an archived generation keeps its row — state, status,
-- fingerprint, times, resource — for archive_retention, but its stored response body, which
-- may hold customer data no replay will ever need again, only for body_retention. The sweeper
-- drops bodies past it (resp_body NULL, body_dropped_at set) in batches that lock with SKIP
-- LOCKED, like its other work. The console and explain already say when a body was dropped.

-- Only archived rows still holding a body: the index empties as bodies are dropped, so a batch
-- never walks the rows already done (the sweeper's cost does not grow with the archive).
CREATE INDEX IF NOT EXISTS key_archive_body_held ON idem.key_archive (tier, archived_at)
  WHERE resp_body IS NOT NULL;

-- Drops the bodies of up to p_limit archived generations of tier p_tier archived at least
-- p_retention ago; returns how many.
CREATE OR REPLACE FUNCTION idem.drop_archived_bodies(p_limit integer, p_tier text, p_retention interval)
RETURNS integer
LANGUAGE sql
AS $$
  WITH victims AS (
    SELECT a.ctid AS tid
      FROM idem.key_archive a
     WHERE a.tier = p_tier AND a.resp_body IS NOT NULL AND a.archived_at <= now() - p_retention
     ORDER BY a.archived_at
     LIMIT greatest(p_limit, 0)
       FOR UPDATE SKIP LOCKED
  ), dropped AS (
    UPDATE idem.key_archive a SET resp_body = NULL, body_dropped_at = now()
     WHERE a.ctid = ANY (ARRAY(SELECT v.tid FROM victims v))
    RETURNING 1
  )
  SELECT count(*)::integer FROM dropped;
$$;

COMMENT ON FUNCTION idem.drop_archived_bodies(integer, text, interval) IS
  'Drops the stored bodies of up to p_limit archived generations of a tier past its body retention; SKIP LOCKED.';
