-- The trace is a replay's only write, so its index cost bounds replay throughput. Measured
-- with COPY of 200k events: the btree on (tenant, endpoint, idem_key, at) cost ~5 µs per row,
-- a hash index on idem_key ~1.5 µs. A key's events are few, so lookups fetch by idem_key
-- through the hash index and filter tenant/endpoint, then sort by time.
DROP INDEX IF EXISTS idem.events_key;
CREATE INDEX events_idem_key ON idem.events USING hash (idem_key);
