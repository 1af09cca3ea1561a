-- The hash index of 0007 assumed a key has few events. In a retry storm one key has thousands:
-- all its entries share one hash bucket, and every insert walks that bucket's overflow chain,
-- so each new trace row of the key cost more than the last (measured: 200k events of one key
-- took 4.5 s, then 19 s, ... 130 s per 200k — about 650 µs a row). A btree on (idem_key, at)
-- appends a key's new events at the end of its range: 2.5 µs a row, however hot the key.
-- Random keys cost ~1.5 µs a row more than with the hash index; a storm must not melt the store.
-- Lookups read a key's events in time order straight from it.
DROP INDEX IF EXISTS idem.events_idem_key;
CREATE INDEX IF NOT EXISTS events_key_at ON idem.events (idem_key, at);
