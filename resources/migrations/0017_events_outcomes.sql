-- idem.events.outcome's CHECK lists exactly the outcomes of core/trace/outcome.h (a store test
-- reads this constraint back and compares the two). 'waited' leaves it: nothing ever wrote it.
-- A request that waits for the original (on_conflict wait:<d>) gets the stored answer, so it is
-- traced as `replayed`; its latency and its detail ("replayed after waiting for the original")
-- say that it waited.
--
-- Adding an outcome re-creates the constraint the same way. NOT VALID: the rows already
-- written passed the older list, and checking them again would scan the whole trace while
-- holding the table's lock; new rows are checked all the same.
ALTER TABLE idem.events
  DROP CONSTRAINT IF EXISTS events_outcome_check,
  ADD CONSTRAINT events_outcome_check CHECK (outcome IN (
    'executed', 'executed_after_expiry', 'lease_takeover', 'replayed', 'conflict', 'mismatch',
    'rejected_expired', 'released', 'lease_lost')) NOT VALID;
