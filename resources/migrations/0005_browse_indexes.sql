-- Indexes the console needs to stay smooth over millions of keys (issue 4): browsing by
-- creation time, finding a key without its tenant or by prefix, and the "executed more than
-- once" filter. Each costs the hot path one more index entry per new key; keys are
-- commit-bound, so that is the price of support staff never waiting on a sequential scan.
CREATE INDEX keys_created_at ON idem.keys (created_at);
-- text_pattern_ops serves both equality and LIKE 'prefix%' whatever the collation.
CREATE INDEX keys_idem_key_pattern ON idem.keys (idem_key text_pattern_ops);
DROP INDEX IF EXISTS idem.key_archive_idem_key;
CREATE INDEX key_archive_idem_key_pattern ON idem.key_archive (idem_key text_pattern_ops);
CREATE INDEX events_executions ON idem.events (tenant, endpoint, idem_key)
  WHERE outcome IN ('executed', 'executed_after_expiry', 'lease_takeover');
