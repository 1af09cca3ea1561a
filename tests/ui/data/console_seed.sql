-- Crafted rows for the console's tests and screenshots: 60 live keys across 4 tenants and
-- 3 endpoints (processing, done, expired, stuck, 2xx/4xx/5xx, LIKE wildcards in keys),
-- 20 archived generations, their events, and the incident key: a payment executed twice
-- because the retry came 32 minutes after the first generation expired.
-- Times are relative to now() so states stay meaningful whenever it runs.

INSERT INTO idem.policies (sha256, document, source)
VALUES ('seed-policy-1', '{"docs_url":"https://docs.example/idempotency","tenant_header":"Account-Id","tiers":[
  {"name":"payments","routes":["POST /v1/payments","POST /v1/refunds"],"ttl":"24h","lease":"30s",
   "amount":{"value":"/amount","currency":"/currency","minor_units":true}},
  {"name":"orders","routes":["POST /v1/orders"],"ttl":"24h","lease":"30s"}]}', 'console_seed.sql');
-- The operator's choice: the console shows the policy in force, not the newest recorded row.
INSERT INTO idem.policy_choices (version) SELECT max(version) FROM idem.policies;

INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,
                       lease_token, lease_until, resp_status, resp_headers, resp_body, resource_ref, request_id,
                       created_at, completed_at, expires_at)
SELECT tenant, endpoint, idem_key, generation, tier, 1, sha256(convert_to(idem_key, 'UTF8')), state,
       CASE WHEN state = 'processing' THEN gen_random_uuid() END,
       CASE WHEN state = 'processing' THEN now() + CASE WHEN i % 10 = 0 THEN interval '-5 minutes' ELSE interval '20 seconds' END END,
       status,
       CASE WHEN status IS NOT NULL THEN '[["Content-Type","application/json"],["Location","/v1/payments/pay_1"]]'::jsonb END,
       CASE WHEN status IS NOT NULL THEN convert_to(format('{"id":"%s","amount":%s,"currency":"usd","status":"%s"}',
            coalesce(ref, 'err_' || i), 1000 + i, CASE WHEN status < 300 THEN 'succeeded' ELSE 'failed' END), 'UTF8') END,
       ref, 'req_' || i, created, CASE WHEN status IS NOT NULL THEN created + interval '180 ms' END,
       created + CASE WHEN i % 7 = 0 THEN interval '10 minutes' ELSE interval '24 hours' END
FROM (
  SELECT i,
         'acct_' || (i % 4) AS tenant,
         (ARRAY['POST /v1/payments', 'POST /v1/refunds', 'POST /v1/orders'])[(i / 4) % 3 + 1] AS endpoint,
         CASE i WHEN 5 THEN 'a_b%1' WHEN 6 THEN 'a_bX2' WHEN 7 THEN 'a_b%3'
                ELSE 'k-' || lpad(i::text, 3, '0') || '-' || md5(i::text) END AS idem_key,
         1 + (i % 9 = 0)::int AS generation,
         CASE WHEN (i / 4) % 3 = 2 THEN 'orders' ELSE 'payments' END AS tier,
         CASE WHEN i % 5 = 0 THEN 'processing' ELSE 'done' END AS state,
         CASE WHEN i % 5 = 0 THEN NULL ELSE (ARRAY[201, 200, 409, 422, 500, 201])[i % 6 + 1] END AS status,
         CASE WHEN i % 5 <> 0 AND (ARRAY[201, 200, 409, 422, 500, 201])[i % 6 + 1] < 300
              THEN (ARRAY['pay_', 're_', 'ord_'])[(i / 4) % 3 + 1] || 'S' || lpad(i::text, 4, '0') END AS ref,
         now() - i * interval '13 minutes' - interval '1 minute' AS created
  FROM generate_series(0, 59) i) s;

-- Earlier generations of the keys that are in generation 2.
INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,
                              resp_status, resp_headers, resp_body, resource_ref, request_id, created_at,
                              completed_at, expires_at, archived_at, archived_by, purge_after)
SELECT tenant, endpoint, idem_key, 1, tier, 1, fingerprint, 'done', 201, '[["Content-Type","application/json"],["Location","/v1/payments/pay_1"]]',
       convert_to('{"id":"pay_OLD' || generation || '"}', 'UTF8'), 'pay_OLD' || substr(md5(idem_key), 1, 6),
       'req_old', created_at - interval '2 days', created_at - interval '2 days' + interval '150 ms',
       created_at - interval '1 day', created_at - interval '1 day' + interval '1 hour', 'sweeper',
       now() + interval '400 days'
  FROM idem.keys WHERE generation = 2;

-- Events: every execution, replays for some, conflicts for others.
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, fingerprint, status, latency_ms, request_id)
SELECT created_at - interval '2 days', tenant, endpoint, idem_key, 1, tier, 'executed', fingerprint, 201, 150, 'req_old'
  FROM idem.key_archive
UNION ALL
SELECT created_at, tenant, endpoint, idem_key, generation, tier,
       CASE WHEN generation = 2 THEN 'executed_after_expiry' ELSE 'executed' END, fingerprint, resp_status, 180, request_id
  FROM idem.keys
UNION ALL
SELECT created_at + n * interval '7 seconds', tenant, endpoint, idem_key, generation, tier, 'replayed', fingerprint,
       resp_status, 3, request_id || '-r' || n
  FROM idem.keys, generate_series(1, 3) n WHERE state = 'done' AND right(request_id, 1) IN ('0', '4', '8')
UNION ALL
SELECT created_at + interval '90 ms', tenant, endpoint, idem_key, generation, tier, 'conflict', fingerprint, 409, 2,
       request_id || '-c'
  FROM idem.keys WHERE right(request_id, 1) = '1';

-- The incident: acct_42 paid with key 8e03978e-…; the retry came 32 min after expiry.
INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,
                              resp_status, resp_headers, resp_body, resource_ref, request_id, created_at,
                              completed_at, expires_at, archived_at, archived_by, purge_after)
VALUES ('acct_42', 'POST /v1/payments', '8e03978e-40d5-43e8-bc93-6894a57f9324', 1, 'payments', 1,
        sha256('{"amount":1000,"currency":"usd","customer":"cus_1"}'), 'done', 201,
        '[["Content-Type","application/json"],["Location","/v1/payments/pay_1NvQ8A"]]',
        convert_to('{"id":"pay_1NvQ8A","amount":1000,"currency":"usd","customer":"cus_1","status":"succeeded"}', 'UTF8'),
        'pay_1NvQ8A', 'req_inc_1', now() - interval '2 days 3 hours', now() - interval '2 days 3 hours' + interval '212 ms',
        now() - interval '1 day 3 hours', now() - interval '1 day 2 hours 28 minutes', 'reuse', now() + interval '400 days');
INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state, resp_status,
                       resp_headers, resp_body, resource_ref, request_id, created_at, completed_at, expires_at)
VALUES ('acct_42', 'POST /v1/payments', '8e03978e-40d5-43e8-bc93-6894a57f9324', 2, 'payments', 1,
        sha256('{"amount":1000,"currency":"usd","customer":"cus_1"}'), 'done', 201,
        '[["Content-Type","application/json"],["Location","/v1/payments/pay_2Kx7Rt"]]',
        convert_to('{"id":"pay_2Kx7Rt","amount":1000,"currency":"usd","customer":"cus_1","status":"succeeded"}', 'UTF8'),
        'pay_2Kx7Rt', 'req_inc_5', now() - interval '1 day 2 hours 28 minutes',
        now() - interval '1 day 2 hours 28 minutes' + interval '198 ms', now() - interval '2 hours 28 minutes');
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, fingerprint, status, latency_ms, request_id, detail)
SELECT now() - interval '2 days 3 hours' + d, 'acct_42', 'POST /v1/payments', '8e03978e-40d5-43e8-bc93-6894a57f9324', g,
       'payments', o, sha256('{"amount":1000,"currency":"usd","customer":"cus_1"}'), s, l, r, dt
  FROM (VALUES (interval '0', 1, 'executed', 201, 212.0, 'req_inc_1', NULL),
               (interval '150 ms', 1, 'conflict', 409, 1.2, 'req_inc_2', 'original still processing; Retry-After: 1'),
               (interval '2 seconds', 1, 'replayed', 201, 2.1, 'req_inc_3', NULL),
               (interval '41 minutes', 1, 'replayed', 201, 1.9, 'req_inc_4', NULL),
               (interval '1 day 32 minutes', 2, 'executed_after_expiry', 201, 198.0, 'req_inc_5',
                'generation 1 expired 32 min before this request'),
               (interval '1 day 32 minutes 4 seconds', 2, 'replayed', 201, 2.4, 'req_inc_6', NULL))
       AS v(d, g, o, s, l, r, dt);
