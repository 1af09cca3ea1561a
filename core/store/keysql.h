#pragma once
// The statements of the hot path, shared by the key store and by `idemctl bench`, which runs
// the very same SQL under pgbench to tell the cost of the SQL from the cost of the library.
namespace idem::store::sql {

// The common repeat, an unexpired done key with the same fingerprint, is answered by a plain
// primary-key read: a replay costs what a SELECT costs. A fresh key is claimed by one INSERT
// (KeyStore::claim chooses which of the two to try first), and only the rare cases (a live
// row that is not replayable, an archived key) run idem.claim, the full decision. Measured:
// folding the read and the claim into one statement (UNION ALL … LIMIT 1) made replays ~35%
// slower; the plain statements instead of plpgsql functions made new keys ~15% faster.
// Binary results: the stored body comes as is. Read by column position: keep the order.
inline constexpr const char* kReplaySql =
    "SELECT k.generation, k.expires_at, k.resp_status, k.resp_headers, k.resp_body, now() AS db_now, "
    "(k.state = 'done' AND k.expires_at > now() AND k.fingerprint = $4) AS replayable "
    "FROM idem.keys k WHERE k.tenant = $1 AND k.endpoint = $2 AND k.idem_key = $3";

// A key never seen (no live row, no archived generation): generation 1, leased to us. No row
// back: the key has a live row or history; the read or idem.claim decides then. The archive check
// runs on this statement's snapshot, blind to a sweeper archiving the key right now; the trigger
// of migration 0014 looks again after the write and fails the claim with IDA01 (then
// idem.claim decides). The key is honoured at least a second past its lease (Retry-After's
// resolution), whatever the TTL.
inline constexpr const char* kFreshClaimSql =
    "INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, "
    "state, lease_token, lease_until, request_id, expires_at) "
    "SELECT $1::text, $2::text, $3::text, 1, $5::text, $6::integer, $4::bytea, 'processing', gen_random_uuid(), "
    "now() + $8::interval, $9::text, greatest(now() + $7::interval, now() + $8::interval + interval '1 second') "
    "WHERE NOT EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = $1 AND a.endpoint = $2 AND a.idem_key = $3) "
    "ON CONFLICT DO NOTHING "
    "RETURNING k.generation, k.expires_at, k.lease_token, k.lease_until, now() AS db_now";

// The completion: the response becomes the key's, and the lease ends. No row back: the lease
// was taken over. Its `executed` trace row goes through the trace writer's batches like every
// other decision (measured: writing it in this statement cost ~10 % of new keys); the key
// itself is the durable record that the operation ran.
// The done row keeps the completing execution's lease token: a retried completion whose first
// COMMIT succeeded unseen finds its own record (kCompletedBySql) instead of a "takeover".
inline constexpr const char* kCompleteSql =
    "UPDATE idem.keys k SET state = 'done', resp_status = $5::integer, resp_headers = $6::jsonb, "
    "resp_body = $7::bytea, resource_ref = $8::text, completed_at = now(), lease_until = NULL "
    "WHERE k.tenant = $1::text AND k.endpoint = $2::text AND k.idem_key = $3::text AND k.state = 'processing' "
    "AND k.lease_token = $4::uuid "
    "RETURNING k.generation, (extract(epoch FROM k.expires_at) * 1000)::bigint AS expires_ms, "
    "(extract(epoch FROM now()) * 1000)::bigint AS now_ms";

// Whether the execution holding `lease_token` already stored its completion (a COMMIT whose
// answer was lost on the way back).
inline constexpr const char* kCompletedBySql =
    "SELECT k.generation, (extract(epoch FROM k.expires_at) * 1000)::bigint AS expires_ms, "
    "(extract(epoch FROM now()) * 1000)::bigint AS now_ms FROM idem.keys k "
    "WHERE k.tenant = $1::text AND k.endpoint = $2::text AND k.idem_key = $3::text AND k.state = 'done' "
    "AND k.lease_token = $4::uuid";

}  // namespace idem::store::sql
