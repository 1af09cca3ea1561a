-- outcome_unknown: an execution whose result nobody knows. `idemctl proxy` forwarded the request
-- and its upstream never answered (or the connection broke after the request was sent): the
-- upstream may have acted. The key keeps a stored problem so no retry runs it again, and the
-- trace says so (core/trace/outcome.h counts it as an execution: the safe reading for support).
-- Re-created as 0017 does it: the same list plus the new name, NOT VALID (old rows passed the
-- narrower list; re-checking them would scan the whole trace).
ALTER TABLE idem.events
  DROP CONSTRAINT IF EXISTS events_outcome_check,
  ADD CONSTRAINT events_outcome_check CHECK (outcome IN (
    'executed', 'executed_after_expiry', 'lease_takeover', 'replayed', 'conflict', 'mismatch',
    'rejected_expired', 'released', 'lease_lost', 'outcome_unknown')) NOT VALID;
-- It counts as an execution (the service may have acted), so the console's "executed more than
-- once" filter must find it: the partial index of executions lists it too. Rebuilt inside the
-- migration's transaction: it holds only execution rows, a small part of the trace.
DROP INDEX IF EXISTS idem.events_executions;
CREATE INDEX events_executions ON idem.events (tenant, endpoint, idem_key)
  WHERE outcome IN ('executed', 'executed_after_expiry', 'lease_takeover', 'outcome_unknown');
