#include "core/gate/metrics.h"

namespace idem::gate {

void Metrics::ByRoute::add(std::string_view route, std::string_view label) {
  const std::lock_guard lock(m_mutex);
  ++m_counts[{std::string(route), std::string(label)}];
}

void Metrics::ByRoute::render(std::string& out, const char* name, const char* help, const char* labelName) const {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
  const std::lock_guard lock(m_mutex);
  for (const auto& [labels, n] : m_counts)
    out += std::string(name) + "{route=\"" + server::metricLabel(labels.first) + "\"," + labelName + "=\"" +
           server::metricLabel(labels.second) + "\"} " + std::to_string(n) + "\n";
}

void Metrics::observed(std::string_view route, std::string_view would) { m_observed.add(route, would); }

void Metrics::suspectedDuplicate(std::string_view route, std::string_view mode) {
  m_suspectedDuplicates.add(route, mode);
}

std::string Metrics::render(const Gauges& g) const {
  std::string out;
  out.reserve(4096);
  renderRequests(out);
  m_observed.render(out, "idem_observed_total",
                    "Requests a tier in rollout observe passed to the execution although enforcement decided "
                    "otherwise, by route and the decision not enforced (would: key_missing, replayed, conflict, "
                    "mismatch, ...).",
                    "would");
  m_suspectedDuplicates.render(out, "idem_suspected_duplicates_total",
                               "Requests that matched another key's execution of the same request inside the "
                               "tier's cross_key window, by route and the tier's mode (observe: executed too; "
                               "hold, reject: answered 409 unless confirmed).",
                               "mode");
  auto gauge = [&](const char* name, const char* help, const std::string& labels, double v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + labels + " " +
           server::metricNumber(v) + "\n";
  };
  out +=
      "# HELP idem_policy_reloads_total Reloads of the policy (SIGHUP): applied, or refused with the policy in "
      "force kept.\n"
      "# TYPE idem_policy_reloads_total counter\n";
  out += "idem_policy_reloads_total{result=\"applied\"} " + std::to_string(m_reloadsApplied.load()) + "\n";
  out += "idem_policy_reloads_total{result=\"refused\"} " + std::to_string(m_reloadsRefused.load()) + "\n";
  gauge("idem_policy_version", "The recorded policy version requests start under (idem.policies.version).", "",
        g.policyVersion);
  out +=
      "# HELP idem_store_pool_connections Store connections by state.\n"
      "# TYPE idem_store_pool_connections gauge\n";
  out += "idem_store_pool_connections{state=\"idle\"} " + std::to_string(g.pool.idle) + "\n";
  out += "idem_store_pool_connections{state=\"in_use\"} " + std::to_string(g.pool.inUse) + "\n";
  gauge("idem_store_pool_max_connections", "Configured size of the store pool.", "", g.pool.maxSize);
  gauge("idem_store_pool_waiting", "Requests waiting for a store connection.", "", g.pool.waiting);
  gauge("idem_store_prepared_statements",
        "1: named prepared statements; 0: unnamed ones (--prepared-statements off, or a pooler in transaction "
        "mode was met).",
        "", g.pool.preparedStatements ? 1 : 0);
  out +=
      "# HELP idem_store_connect_failures_total Failed attempts to connect to the store.\n"
      "# TYPE idem_store_connect_failures_total counter\n"
      "idem_store_connect_failures_total " +
      std::to_string(g.pool.connectFailures) + "\n";
  gauge("idem_trace_queue_events", "Trace events queued for the batched writer.", "",
        static_cast<double>(g.traceQueued));
  out +=
      "# HELP idem_trace_events_written_total Trace events written to idem.events.\n"
      "# TYPE idem_trace_events_written_total counter\n"
      "idem_trace_events_written_total " +
      std::to_string(g.traceWritten) + "\n";
  out +=
      "# HELP idem_trace_events_dropped_total Trace events dropped (queue full, store down at shutdown, or "
      "refused by the server).\n"
      "# TYPE idem_trace_events_dropped_total counter\n"
      "idem_trace_events_dropped_total " +
      std::to_string(g.traceDropped) + "\n";
  out +=
      "# HELP idem_trace_events_refused_total Trace events dropped because PostgreSQL refused their row (the "
      "rest of their batch is written).\n"
      "# TYPE idem_trace_events_refused_total counter\n"
      "idem_trace_events_refused_total " +
      std::to_string(g.traceRefused) + "\n";
  out +=
      "# HELP idem_trace_values_repaired_total Trace events written with a value made storable (bytes that are "
      "not UTF-8, or NUL, replaced by U+FFFD).\n"
      "# TYPE idem_trace_values_repaired_total counter\n"
      "idem_trace_values_repaired_total " +
      std::to_string(g.traceRepaired) + "\n";
  out +=
      "# HELP idem_claims_total Idempotency claims decided by the store.\n"
      "# TYPE idem_claims_total counter\n"
      "idem_claims_total " +
      std::to_string(g.claims) + "\n";
  out +=
      "# HELP idem_claim_statements_total Statements those claims took (one each when a retry finds "
      "its key remembered by this process and a new key does not).\n"
      "# TYPE idem_claim_statements_total counter\n"
      "idem_claim_statements_total " +
      std::to_string(g.claimStatements) + "\n";
  // The write path's two lanes: claims and completions of new keys.
  const auto byKind = [&](const char* name, const char* type, const char* help, long long claim, long long completion) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name +
           "{kind=\"claim\"} " + std::to_string(claim) + "\n" + name + "{kind=\"completion\"} " +
           std::to_string(completion) + "\n";
  };
  const auto& b = g.writeBatches;
  byKind("idem_write_batches_total", "counter",
         "Statements (batches) that wrote new keys' claims and completions; each carries the keys that queued "
         "while the earlier ones ran (a completion with statements of its own, such as serve's ledger row, commits "
         "alone and is not counted).",
         b.claimBatches, b.completionBatches);
  byKind("idem_write_batch_keys_total", "counter",
         "Keys those statements carried: keys / statements is the mean batch.", b.claimedKeys, b.completedKeys);
  gauge("idem_write_batches_in_flight_limit",
        "Write statements that may be in flight at once now: of each kind where a thread waits on each "
        "request's statement (serve: 1 to 8), of both kinds together where none does (proxy: 2 to 16). It "
        "follows the write path's own keys/s, unless --write-batches-in-flight N fixes it (N of each kind).",
        "", static_cast<double>(b.claimSlots));
  byKind("idem_write_queued", "gauge", "Requests queued for the next write statement, by kind.", b.claimsWaiting,
         b.completionsWaiting);
  out +=
      "# HELP idem_leases_renewed_total Leases of running executions renewed (a request that runs longer "
      "than its lease keeps its key).\n"
      "# TYPE idem_leases_renewed_total counter\n"
      "idem_leases_renewed_total " +
      std::to_string(g.leasesRenewed) + "\n";
  out +=
      "# HELP idem_lease_renewal_failures_total Lease renewals that could not reach the store (retried; "
      "a lease that runs out meanwhile may be taken over).\n"
      "# TYPE idem_lease_renewal_failures_total counter\n"
      "idem_lease_renewal_failures_total " +
      std::to_string(g.leaseRenewalFailures) + "\n";
  gauge("idem_claim_unseen_read_first",
        "1 while most keys new to this process turn out to be retries (after a restart, behind a load "
        "balancer), so such keys are read before they are claimed; 0: claimed first.",
        "", g.readUnseenFirst ? 1 : 0);
  gauge("idem_http_requests_in_flight", "Requests being handled now.", "", g.inFlight);
  gauge("idem_completion_backlog",
        "Responses whose work ran while the store refused their record; each is stored when the store "
        "returns (above 0: the store is failing writes, and a restart now would lose these records).",
        "", static_cast<double>(g.completionBacklog));
  out +=
      "# HELP idem_completions_stored_late_total Records the completion backlog stored after the store "
      "came back.\n"
      "# TYPE idem_completions_stored_late_total counter\n"
      "idem_completions_stored_late_total " +
      std::to_string(g.completionsStoredLate) + "\n";
  auto counter = [&](const char* name, const char* help, long long v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
           std::to_string(v) + "\n";
  };
  counter("idem_replay_cache_hits_total", "Replays answered from memory, without a store round trip (still traced).",
          g.replayCache.hits);
  counter("idem_replay_cache_misses_total",
          "Keyed requests the replay cache could not answer (no entry, a stale one, or another payload).",
          g.replayCache.misses);
  counter("idem_replay_cache_evictions_total", "Replay cache entries dropped to stay within its memory bounds.",
          g.replayCache.evictions);
  counter("idem_replay_cache_expired_total",
          "Replay cache entries dropped because their bound came (max age, or the key's expiry by the "
          "database's clock).",
          g.replayCache.expired);
  gauge("idem_replay_cache_entries", "Done keys whose answer the replay cache holds.", "",
        static_cast<double>(g.replayCache.entries));
  gauge("idem_replay_cache_bytes", "Bytes of stored answers the replay cache holds.", "",
        static_cast<double>(g.replayCache.bytes));
  const auto& rb = g.replayBodies;
  gauge("idem_replay_body_bytes", "Bytes of stored answers being replayed now, from the store's read until written.",
        "", static_cast<double>(rb.bytes));
  gauge("idem_replay_body_max_bytes", "The replay budget (--max-replay-bytes).", "", static_cast<double>(rb.maxBytes));
  gauge("idem_replay_large_reads", "Store connections reading a large stored body now.", "", rb.largeReads);
  gauge("idem_replay_large_reads_max", "Store connections that may read large stored bodies at once.", "",
        rb.maxLargeReads);
  gauge("idem_replay_large_read_waits", "Replays waiting for a large-read slot now (at most 4 per slot).", "",
        rb.waiting);
  counter("idem_replay_large_bodies_total", "Stored bodies over 256 KiB read for a replay on their own statement.",
          rb.largeBodies);
  counter("idem_replay_budget_refusals_total",
          "Replays answered 503 with Retry-After because the replay budget had no room (nothing was executed).",
          rb.refused);
  gauge("idem_conflict_waiters",
        "Requests waiting for their key's original to finish (on_conflict wait); each holds a timer, no thread.",
        "", g.conflictWaiters);
  counter("idem_conflict_waits_refused_total",
          "Retries a tier would let wait, answered 409 at once because as many wait already (per key or in all).",
          g.conflictWaitsRefused);
  renderTransport(out);
  return out;
}

}  // namespace idem::gate
