-- outcome_unknown: an execution whose result nobody knows. `idemctl proxy` forwarded the request
-- and its upstream never answered (or the connection broke after the request was sent): the
-- upstream may have acted. The key keeps a stored problem so no retry runs it again, and the
-- trace says so in a word the console shows as is.
-- NOT VALID then VALIDATE: the new check is a superset of the old, and validating takes no lock
-- that stops writers.
ALTER TABLE idem.events DROP CONSTRAINT IF EXISTS events_outcome_check;
ALTER TABLE idem.events ADD CONSTRAINT events_outcome_check CHECK (outcome IN (
  'executed', 'executed_after_expiry', 'replayed', 'conflict', 'mismatch', 'rejected_expired',
  'lease_takeover', 'released', 'lease_lost', 'waited', 'outcome_unknown')) NOT VALID;
ALTER TABLE idem.events VALIDATE CONSTRAINT events_outcome_check;
