-- Idem store, version 15: each face runs under its least-privilege role (README, "Roles").
--   idem_service  `idemctl serve` / the library: claims, completes and releases keys, records
--                 the policy it runs with, appends to the archive (the claim's reuse path) and
--                 to the trace. It never changes or deletes an archived generation or a trace
--                 row, runs no sweeper function and no DDL.
--   idem_admin    `idemctl sweep`: reads everything and runs the sweeper's four functions,
--                 which are its only writes (they run as their owner, SECURITY DEFINER). It
--                 cannot write, change or delete a key, an archived row, a trace row or a
--                 policy by hand, and makes no claims.
--   idem_console  the console, explain, tiers: reads, nothing else.
-- Grants are given by function name, so a function's later signature keeps them.

-- Every function of the schema runs with a fixed search_path: pg_catalog first, so no object
-- of a caller's can stand in for a built-in (now(), =, coalesce…); pg_temp last, so a
-- temporary table never shadows one of ours. Nobody but the owner may execute them unless
-- granted below (PUBLIC had EXECUTE by default: any role with USAGE could sweep).
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, idem, pg_temp', f);
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
  END LOOP;
END $$;

-- The sweeper's functions run as their owner: deleting a batch SKIP LOCKED takes row locks
-- (FOR UPDATE), which needs UPDATE on keys, the archive and the trace — more than the admin
-- should hold. As definer functions the admin can do exactly what they do and nothing else.
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace
              AND p.proname IN ('sweep_archive', 'purge_archive', 'purge_events', 'drop_archived_bodies') LOOP
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', f);
  END LOOP;
END $$;

-- Roles exist only when the migrating user could create them (0001).
DO $$
DECLARE
  f record;
BEGIN
  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) <> 3 THEN
    RAISE NOTICE 'idem roles missing: no grants given (create them and run migrate as their owner)';
    RETURN;
  END IF;
  GRANT USAGE ON SCHEMA idem TO idem_service, idem_console, idem_admin;
  GRANT SELECT ON idem.policies, idem.keys, idem.key_archive, idem.events, idem.schema_migrations
    TO idem_service, idem_console, idem_admin;

  -- The service: the archive and the trace are append-only to it.
  REVOKE UPDATE, DELETE, TRUNCATE ON idem.key_archive FROM idem_service;
  REVOKE UPDATE, DELETE, TRUNCATE ON idem.events, idem.policies FROM idem_service;
  GRANT INSERT ON idem.policies, idem.key_archive, idem.events TO idem_service;
  GRANT INSERT, UPDATE, DELETE ON idem.keys TO idem_service;

  -- The admin: no direct writes at all (0002 gave it the service's).
  REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON idem.policies, idem.keys, idem.key_archive, idem.events
    FROM idem_admin;

  -- The console: reads only.
  REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON idem.policies, idem.keys, idem.key_archive, idem.events
    FROM idem_console;

  FOR f IN SELECT p.oid::regprocedure AS fn, p.proname FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM idem_service, idem_console, idem_admin', f.fn);
    IF f.proname IN ('claim', 'complete', 'complete_strict', 'complete_or_abort', 'release', 'renew_leases') THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_service', f.fn);
    ELSIF f.proname IN ('sweep_archive', 'purge_archive', 'purge_events', 'drop_archived_bodies') THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_admin', f.fn);
    ELSIF f.proname = 'unarchivable_keys' THEN  -- read-only: what the sweeper had to leave live
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO idem_admin, idem_console', f.fn);
    END IF;
    -- keys_generation_after_archive is a trigger function: it fires for whoever writes a key,
    -- without an EXECUTE grant, and reads the archive with the writer's SELECT.
  END LOOP;
END $$;
