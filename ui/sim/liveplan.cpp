#include "ui/sim/liveplan.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>

#include "core/sim/duration.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {
namespace {

core::Usec scaled(core::Usec d, double factor) {
  return static_cast<core::Usec>(std::llround(static_cast<double>(d) * factor));
}
std::optional<core::Usec> scaled(std::optional<core::Usec> d, double factor) {
  if (!d) return std::nullopt;
  return scaled(*d, factor);
}

std::optional<core::Usec> durationField(const QJsonObject& o, const QString& name) {
  const QJsonValue v = o.value(name);
  if (!v.isString()) return std::nullopt;
  return core::parseDuration(v.toString().toStdString());
}

}  // namespace

const EndpointTier* EndpointPolicy::tierFor(const QString& path) const {
  const QString route = u"POST "_s + path;
  for (const auto& t : tiers)
    if (t.routes.contains(route)) return &t;
  return nullptr;
}

std::optional<EndpointPolicy> parseEndpointPolicy(const QByteArray& json, QString* error) {
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (!doc.isObject() || !doc.object().value(u"tiers"_s).isArray()) {
    if (error)
      *error = QObject::tr("The endpoint's /idempotency answer is not the published policy (JSON with \"tiers\"): %1")
                   .arg(parseError.error != QJsonParseError::NoError ? parseError.errorString() : u"no tiers"_s);
    return std::nullopt;
  }
  EndpointPolicy p;
  p.tenantHeader = doc.object().value(u"tenant_header"_s).toString();
  for (const QJsonValue& v : doc.object().value(u"tiers"_s).toArray()) {
    const QJsonObject o = v.toObject();
    EndpointTier t;
    t.name = o.value(u"name"_s).toString();
    for (const QJsonValue& r : o.value(u"routes"_s).toArray()) t.routes << r.toString();
    if (auto ttl = durationField(o, u"ttl"_s))
      t.ttl = *ttl;
    else
      t.ttl = static_cast<core::Usec>(o.value(u"ttl_seconds"_s).toDouble() * 1e6);
    if (auto lease = durationField(o, u"lease"_s)) t.lease = *lease;
    t.onConflict = o.value(u"on_conflict"_s).toString();
    p.tiers << t;
  }
  return p;
}

QStringList liveRoutes() { return {u"/v1/payments"_s, u"/v1/orders"_s}; }

QByteArray liveBody(const QString& route) {
  if (route == u"/v1/orders"_s)
    return QByteArrayLiteral("{\"item\":\"sku_sim\",\"quantity\":1,\"customer\":\"cus_sim\"}");
  return QByteArrayLiteral("{\"amount\":1000,\"currency\":\"usd\",\"customer\":\"cus_sim\"}");
}

LivePlan planLive(const core::SimConfig& model, const LiveSettings& s) {
  const double k = std::max(s.compression, 1e-3);
  const double inv = 1.0 / k;
  LivePlan plan;
  core::Policy& p = plan.livePolicy;
  p = model.policy;
  p.timeout = scaled(p.timeout, inv);
  p.deadline = scaled(p.deadline, inv);
  p.base = scaled(p.base, inv);
  p.cap = scaled(p.cap, inv);
  p.minDelay = scaled(p.minDelay, inv);
  p.retryAfterCap = scaled(p.retryAfterCap, inv);
  p.budget.window = std::max<core::Usec>(core::kUsecPerSecond / 1000, scaled(p.budget.window, inv));

  plan.failureRate = model.server.failureRate;
  plan.latencyMedian = scaled(model.server.latencyMedian, inv);
  plan.latencyP99 = scaled(model.server.latencyP99, inv);

  core::SimConfig& c = plan.prediction;
  c = model;
  c.clients.operations = std::max<std::int64_t>(model.clients.operations, kPredictionOperations);
  // The endpoint answers Sim-Fail: before with 503 + Retry-After: 1 (one live second).
  c.server.failureStatus = 503;
  c.server.retryAfter = scaled(core::kUsecPerSecond, k);
  // A 409 carries the lease's remaining time, at most 5 s; the model takes a fixed value.
  c.server.conflictRetryAfter = scaled(std::min<core::Usec>(s.tier.lease, 5 * core::kUsecPerSecond), k);
  c.store.ttl = scaled(s.tier.ttl, k);
  c.store.lease = scaled(s.tier.lease, k);
  c.store.purgeLag = 0;
  c.store.storedAt = core::Store::StoredAt::FirstReceipt;

  if (model.server.capacityRps > 0) plan.notes << QObject::tr("capacity (the real server's own applies)");
  if (!model.server.events.empty()) plan.notes << QObject::tr("spike/outage events");
  if (model.server.connectionErrorRate > 0) plan.notes << QObject::tr("connection errors");
  if (model.server.lostResponseRate > 0) plan.notes << QObject::tr("lost answers");
  if (model.store.purgeLag > 0) plan.notes << QObject::tr("purge lag (the endpoint checks expiry per request)");
  if (model.store.storedAt == core::Store::StoredAt::Completion)
    plan.notes << QObject::tr("stored at completion (Idem stores at first receipt)");
  if (s.tier.onConflict.startsWith(u"wait"_s))
    plan.notes << QObject::tr("the tier's on_conflict %1 (the model answers 409 at once)").arg(s.tier.onConflict);
  c.server.capacityRps = 0;
  c.server.events.clear();
  c.server.connectionErrorRate = 0;
  c.server.lostResponseRate = 0;
  return plan;
}

}  // namespace idem::ui::sim
