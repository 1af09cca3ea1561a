-- Idem store, version 22: the policy in force is one the operator chose, not the newest row.
-- idem.policies stays the record of every policy an enforcer ran with (keys name their version);
-- idem_service appends to it at start. Which recorded version the sweeper and the console follow
-- is written here, by the admin (`idemctl policy activate`) or the schema's owner, never by the
-- service: a service that could choose would steer the sweeper's retentions (docs/store.md, Roles).
-- Append-only: the newest row per service is the choice; older rows are the history the sweeper
-- falls back on when a chosen document cannot give retentions. `service` names whose policy it
-- is, so several services with a policy each can share one store; today every enforcer is
-- 'default'.
CREATE TABLE idem.policy_choices (
    id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    service   text        NOT NULL DEFAULT 'default',
    version   integer     NOT NULL REFERENCES idem.policies (version),
    chosen_at timestamptz NOT NULL DEFAULT now(),
    chosen_by text        NOT NULL DEFAULT current_user
);
CREATE INDEX policy_choices_service ON idem.policy_choices (service, id DESC);

-- A store upgraded in place keeps following the policy it followed until now (the newest row),
-- recorded as the migration's choice so the history says who chose it.
INSERT INTO idem.policy_choices (version, chosen_by)
SELECT max(version), 'migration 22 (as ' || current_user || ')' FROM idem.policies HAVING max(version) IS NOT NULL;

DO $$
BEGIN
  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')) <> 3 THEN
    RETURN;
  END IF;
  GRANT SELECT ON idem.policy_choices TO idem_service, idem_console, idem_admin;
  -- The admin chooses: service and version only, so chosen_by is always who it was.
  GRANT INSERT (service, version) ON idem.policy_choices TO idem_admin;
  -- Choosing a policy nobody ran yet (`idemctl policy activate FILE`) records it first.
  GRANT INSERT ON idem.policies TO idem_admin;
END $$;
