-- The key browser sorted by status or generation at 10 million keys (tests/bench/CONSOLE.md:
-- status took 3.1 s). An index per sortable column would add an entry to every new key on the
-- hot path. These two hold only the rows that are rare by construction, which a new key never
-- is (it enters processing, generation 1, and completes with 200 or 201 in the common case):
-- the console reads each common value's rows in primary-key order and these in index order
-- (ui/keys/keyquery.cpp, the sort branches). Their predicates are spelled exactly as the
-- console's branches so the planner matches them.
CREATE INDEX keys_done_uncommon_status ON idem.keys ((coalesce(resp_status, 0)), tenant, endpoint, idem_key)
    WHERE state = 'done' AND coalesce(resp_status, 0) <> ALL ('{200,201}'::int[]);
CREATE INDEX keys_later_generations ON idem.keys (generation, tenant, endpoint, idem_key)
    WHERE generation <> 1;
