#pragma once
// Every statement the key store sends, in one place. `idemctl bench` runs the very same SQL under
// pgbench to tell the cost of the SQL from the cost of the library.
//
// Where the claim decision lives: the full decision is the plpgsql function idem.claim (its
// current text is in resources/migrations/0014_never_twice.sql, the last migration to replace
// it). Two of its branches — a replayable done key, a key never seen — also run as the plain
// statements below, because they are nearly every request: measured, the plain statements
// instead of the function made new keys ~15% faster, and folding the read and the claim into one
// statement (UNION ALL … LIMIT 1) made replays ~35% slower. A change to the rules of those two
// branches is a change here and in idem.claim; tst_claimorder runs both paths to the same decision.
// Results are read by column name (resolved once per result, core/store/pg.h), so the order of a
// select list is free.
// A key is (tenant, endpoint, key, service) since migration 0025: every statement below names all
// four, so two services sharing a store never meet on a key (docs/store.md, "Services").
namespace idem::store::sql {

// The common repeat, an unexpired done key with the same fingerprint, is answered by a plain
// primary-key read: a replay costs what a SELECT costs. Binary results: the stored body comes as is.
// `sync_durable`: whether this session's commits wait for a synchronous standby (kAwaitDurableSql).
// A body over kInlineReplayBody (replaybodies.h; 262144 here) is not sent: only its length, so
// its bytes can be taken from the replay budget before kReplayBodySql reads it (octet_length of
// a bytea reads the TOAST header, not the value).
inline constexpr const char* kReplaySql =
    "SELECT k.generation, k.expires_at, k.resp_status, k.resp_headers, octet_length(k.resp_body) AS body_bytes, "
    "CASE WHEN octet_length(k.resp_body) <= 262144 THEN k.resp_body END AS resp_body, now() AS db_now, "
    "(k.state = 'done' AND k.expires_at > now() AND k.fingerprint = $4) AS replayable, "
    "(current_setting('synchronous_standby_names') <> '' "
    "AND current_setting('synchronous_commit') IN ('on', 'remote_write', 'remote_apply')) AS sync_durable "
    "FROM idem.keys k WHERE k.tenant = $1 AND k.endpoint = $2 AND k.idem_key = $3 AND k.service = $5";

// A large stored body, read alone once the replay's budget and read slot are held; the generation
// the replay read, so a key purged and run again meanwhile returns no row (the claim starts over).
inline constexpr const char* kReplayBodySql =
    "SELECT k.resp_body FROM idem.keys k WHERE k.tenant = $1 AND k.endpoint = $2 AND k.idem_key = $3 "
    "AND k.service = $4 AND k.generation = $5 AND k.state = 'done'";

// Before a stored answer is acknowledged under synchronous durability: a row read on the primary
// may have been committed locally by a commit whose wait for the standby was cut short (a
// terminated backend, a fast stop) — PostgreSQL never acknowledged it and the standby may not
// have it. A transactional WAL record makes this statement's own commit wait for the
// synchronous standby; the standby confirms WAL in order, so once it has this commit it has the
// row's too. No privilege needed; nothing is written but a logical-decoding message (prefix
// "idem"). A no-op outside synchronous durability (no WAL, no wait).
inline constexpr const char* kAwaitDurableSql =
    "SELECT CASE WHEN current_setting('synchronous_standby_names') <> '' "
    "AND current_setting('synchronous_commit') IN ('on', 'remote_write', 'remote_apply') "
    "THEN pg_logical_emit_message(true, 'idem', 'durable') END AS lsn";

// A key never seen (no live row, no archived generation): generation 1, leased to us. No row
// back: the key has a live row or history; the read or idem.claim decides then. The archive check
// runs on this statement's snapshot, blind to a sweeper archiving the key right now; the trigger
// of migration 0014 looks again after the write and fails the claim with kArchivedMeanwhile (then
// idem.claim decides). The key is honoured at least a second past its lease (Retry-After's
// resolution), whatever the TTL. $11 is true on tiers with cross_key (migration 0027): the row
// becomes the latest execution of its request, and no row back may also mean that another key
// holds that mark (idem.claim_same_request decides then).
inline constexpr const char* kFreshClaimSql =
    "INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, service, generation, tier, policy_version, fingerprint, "
    "state, lease_token, lease_until, request_id, expires_at, same_request_latest) "
    "SELECT $1::text, $2::text, $3::text, $10::text, 1, $5::text, $6::integer, $4::bytea, 'processing', gen_random_uuid(), "
    "now() + $8::interval, $9::text, greatest(now() + $7::interval, now() + $8::interval + interval '1 second'), "
    "$11::boolean "
    "WHERE NOT EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = $1 AND a.endpoint = $2 AND a.idem_key = $3 "
    "AND a.service = $10) "
    "ON CONFLICT DO NOTHING "
    "RETURNING k.generation, k.expires_at, k.lease_token, k.lease_until, now() AS db_now";

// The same for a batch of keys claimed together (core/store/keybatches.h): one statement, one
// commit. Rows come as parallel arrays, sorted by key so that two processes' batches lock in
// one order; a key that returns no row has a live row or history (or, with cross_key, another key
// holds its request's mark), and decides alone. Two keys of one request in a batch: the second
// returns no row (its INSERT meets the first's mark) and decides alone. A key
// claimed by an earlier row of the same statement is not in a batch (the batch holds each key once).
inline constexpr const char* kFreshClaimBatchSql =
    "INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, service, generation, tier, policy_version, fingerprint, "
    "state, lease_token, lease_until, request_id, expires_at, same_request_latest) "
    "SELECT c.tenant, c.endpoint, c.idem_key, c.service, 1, c.tier, c.policy_version, c.fingerprint, 'processing', "
    "gen_random_uuid(), now() + c.lease, c.request_id, greatest(now() + c.ttl, now() + c.lease + interval '1 second'), "
    "c.same_request_latest "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::integer[], $7::interval[], "
    "$8::interval[], $9::text[], $10::text[], $11::boolean[]) AS c(tenant, endpoint, idem_key, fingerprint, tier, "
    "policy_version, ttl, lease, request_id, service, same_request_latest) "
    "WHERE NOT EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = c.tenant AND a.endpoint = c.endpoint "
    "AND a.idem_key = c.idem_key AND a.service = c.service) "
    "ON CONFLICT DO NOTHING "
    "RETURNING k.tenant, k.endpoint, k.idem_key, k.service, k.generation, k.expires_at, k.lease_token, k.lease_until, "
    "now() AS db_now";

// SQLSTATE of migration 0014's trigger: a live generation would not be newer than the archive.
inline constexpr const char* kArchivedMeanwhile = "IDA01";

// The rare cases — a live row that is not replayable (409, 422, lease takeover, expired), a key
// with archived generations — make the whole decision in idem.claim.
inline constexpr const char* kClaimSql =
    "SELECT c.decision, c.generation, c.expires_at, c.lease_token, c.lease_until, c.resp_status, c.resp_headers, "
    "c.resp_body, c.retry_after_ms, now() AS db_now "
    "FROM idem.claim($1, $2, $3, $4, $5, $6, $7::interval, $8::interval, $9, $10, $11::interval, $12::text) c";

// The completion: the response becomes the key's, and the lease ends. No row back: the lease
// was taken over. Its `executed` trace row goes through the trace writer's batches like every
// other decision (measured: writing it in this statement cost ~10 % of new keys); the key
// itself is the durable record that the operation ran.
// The done row keeps the completing execution's lease token: a retried completion whose first
// COMMIT succeeded unseen finds its own record (kCompletedBySql) instead of a "takeover".
#define IDEM_COMPLETE_UPDATE                                                                                   \
  "UPDATE idem.keys k SET state = 'done', resp_status = $5::integer, resp_headers = $6::jsonb, "              \
  "resp_body = $7::bytea, resource_ref = $8::text, completed_at = now(), lease_until = NULL "              \
  "WHERE k.tenant = $1::text AND k.endpoint = $2::text AND k.idem_key = $3::text AND k.service = $9::text "     \
  "AND k.state = 'processing' AND k.lease_token = $4::uuid "                                                   \
  "RETURNING k.generation, (extract(epoch FROM k.expires_at) * 1000)::bigint AS expires_ms, "                 \
  "(extract(epoch FROM now()) * 1000)::bigint AS now_ms"
inline constexpr const char* kCompleteSql = IDEM_COMPLETE_UPDATE;

// The completion of a batch of keys in one statement and one commit (core/store/keybatches.h).
// A key that returns no row is not processing under that token: it decides alone, as above.
inline constexpr const char* kCompleteBatchSql =
    "UPDATE idem.keys k SET state = 'done', resp_status = c.status, resp_headers = c.headers, "
    "resp_body = c.body, resource_ref = c.resource_ref, completed_at = now(), lease_until = NULL "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::integer[], $6::jsonb[], $7::bytea[], "
    "$8::text[], $9::text[]) AS c(tenant, endpoint, idem_key, lease_token, status, headers, body, resource_ref, "
    "service) "
    "WHERE k.tenant = c.tenant AND k.endpoint = c.endpoint AND k.idem_key = c.idem_key AND k.service = c.service "
    "AND k.state = 'processing' AND k.lease_token = c.lease_token "
    "RETURNING k.tenant, k.endpoint, k.idem_key, k.service, k.lease_token, k.generation, "
    "(extract(epoch FROM k.expires_at) * 1000)::bigint AS expires_ms, "
    "(extract(epoch FROM now()) * 1000)::bigint AS now_ms";

// The same completion inside a transaction with side effects (a ledger row), pipelined with
// them: a lost lease must abort the transaction, so the side effects cannot stand without their
// key. No plain statement can fail on "no row updated"; idem.refuse_completion (migration 0019)
// raises kLeaseLost, and CASE calls it only when the UPDATE found no row.
inline constexpr const char* kCompleteOrAbortSql =
    "WITH done AS (" IDEM_COMPLETE_UPDATE ") "
    "SELECT generation, expires_ms, now_ms FROM done "
    "UNION ALL SELECT NULL::integer, NULL::bigint, NULL::bigint "
    "WHERE CASE WHEN EXISTS (SELECT 1 FROM done) THEN false ELSE idem.refuse_completion($3::text) END";
#undef IDEM_COMPLETE_UPDATE

// SQLSTATE of a completion refused because the lease was taken over.
inline constexpr const char* kLeaseLost = "IDL01";

// A completion that came too late is recorded in the trace straight away (it is rare, and the
// operator needs it even if this process dies next).
inline constexpr const char* kLeaseLostSql =
    "INSERT INTO idem.events (tenant, endpoint, idem_key, outcome, status, latency_ms, request_id, detail, service) "
    "VALUES ($1, $2, $3, 'lease_lost', $4, $5, $6, $7, $8)";

// Every lease a process holds renewed in one statement (arrays of the same length). It locks
// the keys in key order, the order of the completion batches (migration 0028: 0025's version
// locked them in lease order, and a renewal and a completion batch could deadlock).
inline constexpr const char* kRenewLeasesSql =
    "SELECT r.lease_token::text AS lease_token FROM idem.renew_leases($1::text[], $2::text[], $3::text[], "
    "$4::uuid[], $5::interval[], $6::text[]) r";

inline constexpr const char* kReleaseSql = "SELECT idem.release($1, $2, $3, $4::uuid, $5, $6, $7, $8) AS released";

// Whether the execution holding `lease_token` already stored its completion (a COMMIT whose
// answer was lost on the way back).
inline constexpr const char* kCompletedBySql =
    "SELECT k.generation, (extract(epoch FROM k.expires_at) * 1000)::bigint AS expires_ms, "
    "(extract(epoch FROM now()) * 1000)::bigint AS now_ms FROM idem.keys k "
    "WHERE k.tenant = $1::text AND k.endpoint = $2::text AND k.idem_key = $3::text AND k.service = $5::text "
    "AND k.state = 'done' AND k.lease_token = $4::uuid";

}  // namespace idem::store::sql
