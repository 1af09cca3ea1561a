-- keys.policy_version no longer references idem.policies by a foreign key. The check ran on
-- every claim of a new key (a SELECT … FOR KEY SHARE of the one policy row every concurrent
-- claim shares): measured ~7 % of new-key throughput at 8 clients, and shared row locks on one
-- hot row turn into MultiXacts under load. Policies are append-only and recorded before their
-- version is used (PolicyStore), and idem.key_archive never had the constraint; readers join
-- with LEFT JOIN and say when a version is unknown.
ALTER TABLE idem.keys DROP CONSTRAINT IF EXISTS keys_policy_version_fkey;
