#include "core/store/sweeper.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/policy/duration.h"
#include "core/store/lockwait.h"
#include "core/store/policystore.h"
#include "core/store/transaction.h"

namespace idem::store {
namespace {

// An interval for a bound parameter; PostgreSQL normalises it (400 days stays exact).
std::string intervalParam(Millis d) { return std::to_string(d.count()) + " milliseconds"; }

Millis parseRetention(const nlohmann::json& value, const std::string& source, const std::string& field) {
  if (!value.is_string())
    throw RetentionError(source + ": " + field + ": expected a duration string such as \"400d\"");
  auto d = policy::parseDuration(value.get<std::string>());
  if (!d || d->count() <= 0)
    throw RetentionError(source + ": " + field + ": \"" + value.get<std::string>() +
                         "\" is not a duration (use 250ms, 2s, 30m, 24h or 30d)");
  return *d;
}

bool stopRequested(const SweepOptions& o) { return o.stop && o.stop->load(std::memory_order_relaxed); }

}  // namespace

Millis Retentions::longest() const {
  Millis m = fallback;
  for (const auto& t : tiers) m = std::max(m, t.retention);
  return m;
}

Retentions retentionsFromPolicy(const std::string& documentJson, const std::string& source,
                                const std::string& service) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(documentJson, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::exception& e) {
    throw RetentionError(source + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("tiers") || !doc["tiers"].is_array())
    throw RetentionError(source + ": tiers: expected an array of tiers");
  Retentions out;
  out.source = source;
  out.fallback = kDefaultArchiveRetention;
  const auto& tiers = doc["tiers"];
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const std::string field = "tiers[" + std::to_string(i) + "]";
    const auto& tier = tiers[i];
    if (!tier.is_object() || !tier.contains("name") || !tier["name"].is_string())
      throw RetentionError(source + ": " + field + ".name: expected a string");
    TierRetention t;
    t.tier = tier["name"].get<std::string>();
    t.service = service;
    t.retention = tier.contains("archive_retention")
                      ? parseRetention(tier["archive_retention"], source, field + ".archive_retention")
                      : kDefaultArchiveRetention;
    if (tier.contains("body_retention"))
      t.body = parseRetention(tier["body_retention"], source, field + ".body_retention");
    out.tiers.push_back(std::move(t));
  }
  return out;
}

Retentions retentionsInForce(pg::Connection& conn) {
  Retentions out;
  out.fallback = kDefaultArchiveRetention;
  for (const auto& service : servicesWithChoice(conn)) {
    const std::string whose = service == kDefaultService ? "" : " for service " + service;
    bool found = false;
    for (const auto& choice : policyChoices(conn, service)) {
      const std::string source = "policy version " + std::to_string(choice.version) + whose + " in the store";
      try {
        auto own = retentionsFromPolicy(choice.document, source, service);
        out.tiers.insert(out.tiers.end(), own.tiers.begin(), own.tiers.end());
      } catch (const RetentionError& e) {
        out.skipped.push_back(std::string(e.what()) + " (chosen by " + choice.chosenBy +
                              "; skipped, the choice before it stays in force)");
        continue;
      }
      out.source += (out.source.empty() ? "" : " + ") + source;
      found = true;
      break;
    }
    if (!found)
      out.skipped.push_back("no chosen policy" + whose +
                            " gives retentions: its tiers keep the built-in default");
  }
  if (out.source.empty())
    out.source = "built-in default (no policy chosen in the store: idemctl policy activate)";
  return out;
}

int sweepArchiveBatch(pg::Connection& conn, int limit, const Retentions& retentions) {
  std::vector<std::string> services;
  std::vector<std::string> names;
  std::vector<std::string> intervals;
  for (const auto& t : retentions.tiers) {
    services.push_back(t.service);
    names.push_back(t.tier);
    intervals.push_back(intervalParam(t.retention));
  }
  auto r = conn.execPrepared("idem_sweep_archive",
                             "SELECT idem.sweep_archive($1::integer, $2::text[], $3::text[], $4::interval[], "
                             "$5::interval) AS n",
                             {limit, pg::arrayLiteral(services), pg::arrayLiteral(names), pg::arrayLiteral(intervals),
                              intervalParam(retentions.fallback)});
  return static_cast<int>(r.integer(0, "n"));
}

std::vector<UnarchivableKey> unarchivableKeys(pg::Connection& conn, int limit) {
  auto r = conn.exec(
      "SELECT tenant, endpoint, idem_key, service, generation, archived_generation FROM idem.unarchivable_keys($1)",
      {limit});
  std::vector<UnarchivableKey> out;
  for (int i = 0; i < r.rows(); ++i)
    out.push_back({r.str(i, "tenant"), r.str(i, "endpoint"), r.str(i, "idem_key"), r.str(i, "service"),
                   static_cast<int>(r.integer(i, "generation")), static_cast<int>(r.integer(i, "archived_generation"))});
  return out;
}

int dropBodiesBatch(pg::Connection& conn, int limit, const TierRetention& t) {
  auto r = conn.execPrepared("idem_drop_archived_bodies",
                             "SELECT idem.drop_archived_bodies($1::integer, $2::text, $3::text, $4::interval) AS n",
                             {limit, t.service, t.tier, intervalParam(t.body.value_or(Millis{0}))});
  return static_cast<int>(r.integer(0, "n"));
}

int purgeArchiveBatch(pg::Connection& conn, int limit) {
  auto r = conn.execPrepared("idem_purge_archive", "SELECT idem.purge_archive($1::integer) AS n", {limit});
  return static_cast<int>(r.integer(0, "n"));
}

int purgeEventsBatch(pg::Connection& conn, int limit, Millis olderThan) {
  auto r = conn.execPrepared("idem_purge_events", "SELECT idem.purge_events($1::integer, $2::interval) AS n",
                             {limit, intervalParam(olderThan)});
  return static_cast<int>(r.integer(0, "n"));
}

SweepReport sweep(pg::Connection& conn, const SweepOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const int batch = std::max(1, options.batch);
  SweepReport report;
  auto outOfTime = [&] {
    return stopRequested(options) || (options.budget.count() > 0 && Clock::now() - started >= options.budget);
  };
  // Runs one kind of batch until a batch comes back short (nothing more to do) or time is up.
  auto drain = [&](auto&& runBatch, long long& total) {
    for (;;) {
      if (outOfTime()) {
        report.complete = false;
        return false;
      }
      int n = 0;
      if (options.lockTimeout.count() > 0) {
        pg::Transaction tx(conn);
        limitLockWait(conn, options.lockTimeout);
        n = runBatch();
        tx.commit();
      } else {
        n = runBatch();
      }
      ++report.batches;
      total += n;
      if (n < batch) return true;
    }
  };
  bool going = true;
  if (options.archive) {
    going = drain([&] { return sweepArchiveBatch(conn, batch, options.retentions); }, report.archived);
    if (going) report.unarchivable = unarchivableKeys(conn, 100);
  }
  if (options.dropBodies)
    for (const auto& t : options.retentions.tiers)
      if (going && t.body)
        going = drain([&] { return dropBodiesBatch(conn, batch, t); }, report.bodiesDropped);
  if (going && options.purgeArchive) going = drain([&] { return purgeArchiveBatch(conn, batch); }, report.purged);
  if (going && options.purgeEvents)
    drain([&] { return purgeEventsBatch(conn, batch, options.retentions.longest()); }, report.eventsPurged);
  report.elapsed = std::chrono::duration_cast<Millis>(Clock::now() - started);
  return report;
}

}  // namespace idem::store
