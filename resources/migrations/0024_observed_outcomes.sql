-- Rollout `observe` (docs/policy.md, "Rollout"): a tier that records what enforcement would
-- have done and enforces nothing. Its decisions are trace rows of their own, named after the
-- decision that was not enforced (core/trace/outcome.h, kind Observed). A keyless request's
-- row has an empty idem_key. Re-created as 0018 does it: the same list plus the new names,
-- NOT VALID (old rows passed the narrower list; re-checking them would scan the whole trace).
ALTER TABLE idem.events
  DROP CONSTRAINT IF EXISTS events_outcome_check,
  ADD CONSTRAINT events_outcome_check CHECK (outcome IN (
    'executed', 'executed_after_expiry', 'lease_takeover', 'replayed', 'conflict', 'mismatch',
    'rejected_expired', 'released', 'lease_lost', 'outcome_unknown',
    'observed_key_missing', 'observed_key_malformed', 'observed_replayed', 'observed_conflict',
    'observed_mismatch', 'observed_rejected_expired', 'observed_refused')) NOT VALID;
