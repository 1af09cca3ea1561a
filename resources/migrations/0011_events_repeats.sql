-- A retry storm's identical decisions are folded into one trace row. The trace writer keeps
-- the first few identical decisions on a key (same generation, outcome, status and
-- fingerprint) within one batch as rows of their own, and writes the rest as one row: `at` the
-- first of them, `last_at` the last, `repeats` how many. Ordinary retries (a handful per key,
-- seconds apart) never fold; a storm of thousands of replays a second on one key no longer
-- writes thousands of rows a second (measured before: one trace row per replay held a one-key
-- storm at ~0.75x of a plain SELECT; the trace was the replay's only write).
-- Both columns have defaults, so PostgreSQL adds them without rewriting the table.
ALTER TABLE idem.events ADD COLUMN IF NOT EXISTS repeats integer NOT NULL DEFAULT 1;
ALTER TABLE idem.events ADD COLUMN IF NOT EXISTS last_at timestamptz;
COMMENT ON COLUMN idem.events.repeats IS
  'How many identical decisions this row stands for (1, or more for a folded retry storm).';
COMMENT ON COLUMN idem.events.last_at IS
  'For a folded row (repeats > 1): the time of the last decision it stands for; at is the first.';
