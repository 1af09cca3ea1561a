-- The key browser sorted by status or generation at 10 million keys (tests/bench/CONSOLE.md:
-- status took 3.1 s, the whole table sorted). The console reads these orders as branches, each
-- in an index's order (ui/keys/keyquery.cpp, the sort branches); the predicates below are
-- spelled as its branches are so the planner matches them.
--
-- Status: every done key, by status then the primary key's columns. One entry per completed key
-- (the new-key hot path's completion), none at the claim: a key in flight is not in it. Reading
-- status 200 and 201 in primary-key order instead, with no index, was tried and missed by far:
-- in that order the statuses bunch by endpoint (webhooks answer 200, payments 201), and a page
-- of 201s walked 97 000 rows of one endpoint first (580 ms at 10 M keys).
CREATE INDEX keys_done_status ON idem.keys ((coalesce(resp_status, 0)), tenant, endpoint, idem_key)
    WHERE state = 'done';
-- Generation: only the keys past their first generation, which a new key never is; generation 1
-- is read in primary-key order (dense everywhere: 98 % of keys).
CREATE INDEX keys_later_generations ON idem.keys (generation, tenant, endpoint, idem_key)
    WHERE generation <> 1;
-- The archive is written by the sweeper and by re-execution after expiry, not by a new key: its
-- status and generation orders get plain indexes.
CREATE INDEX key_archive_status ON idem.key_archive ((coalesce(resp_status, 0)), tenant, endpoint, idem_key, generation);
CREATE INDEX key_archive_generation ON idem.key_archive (generation, tenant, endpoint, idem_key);
