-- The key browser at 10 million keys (issue 4, tests/bench/CONSOLE.md). Its default order is
-- expires_at, and a key's TTL comes from its tier: in that order a tier or an endpoint is not
-- spread evenly but bunched (7-day webhooks first, 30-minute orders last). Walking
-- keys_expires_at and filtering then reads millions of rows before the first page of
-- "tier = payments" or "endpoint = POST /v1/orders" (measured: 360 ms at 1 M keys, seconds at
-- 10 M), while the planner, assuming an even spread, expects a few thousand. With the filtered
-- column first, the page is one short index range whatever the spread. Two more index entries
-- per new key on the hot path: the price of a tier or endpoint filter answering in
-- milliseconds.
CREATE INDEX keys_tier_expires_at ON idem.keys (tier, expires_at);
CREATE INDEX keys_endpoint_expires_at ON idem.keys (endpoint, expires_at);
-- The Archived state pages in the same default order; without this the archive (a tenth of
-- the keys or more) was sorted whole for every page.
CREATE INDEX key_archive_expires_at ON idem.key_archive (expires_at);
