#pragma once
// Live mode's mapping from the model to a real run against the embedded endpoint.
//
// Time compression k (model seconds per live second) scales TTL and backoff together: every
// client duration runs k times shorter live (timeout, deadline, backoff base and cap, floor,
// Retry-After cap, budget window), and every duration the endpoint imposes stands for k times
// longer in the model (the tier's TTL and lease, Retry-After headers, its own latency).
// The server model is driven through fault injection: each attempt fails before execution
// with the model's failure rate (`Sim-Fail: before`, answered 503 + Retry-After: 1), and an
// attempt that executes takes a log-normal latency ÷ k (`Sim-Delay-Ms`), so timeouts happen
// for real and the work goes on after the client gave up. The prediction is the core model
// run with exactly that: the tier's TTL × k, 503 failures with Retry-After k s, no capacity
// limit, events or network faults (the real server and loopback provide those).
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

#include "core/sim/config.h"

namespace idem::ui::sim {

/// One tier of the endpoint's published policy (GET /idempotency, JSON).
struct EndpointTier {
  QString name;
  QStringList routes;  // "POST /v1/payments"
  idem::sim::Usec ttl = 0;
  idem::sim::Usec lease = 30 * idem::sim::kUsecPerSecond;
  QString onConflict;  // "409" | "wait:2s"
};

struct EndpointPolicy {
  QString tenantHeader;
  QList<EndpointTier> tiers;
  /// The tier of "POST <path>", or nullptr.
  [[nodiscard]] const EndpointTier* tierFor(const QString& path) const;
};

/// Parses the published policy; on failure returns nothing and sets *error.
[[nodiscard]] std::optional<EndpointPolicy> parseEndpointPolicy(const QByteArray& json, QString* error);

/// Routes live mode can drive (their executions are listed by GET <route>?idempotency_key=K).
[[nodiscard]] QStringList liveRoutes();

struct LiveSettings {
  QUrl endpoint;  // http://127.0.0.1:PORT
  QString route = QStringLiteral("/v1/payments");
  QString tenantHeader = QStringLiteral("Account-Id");
  QString tenant = QStringLiteral("acct_sim");
  int clients = 8;  // concurrent clients
  int operations = 200;
  double compression = 60;  // k: model seconds per live second
  EndpointTier tier;        // the route's tier
  QString keyPrefix;        // "sim-20250101-120000-A-": keys are prefix + number
};

struct LivePlan {
  idem::sim::Policy livePolicy;       // the client policy with every duration ÷ k
  idem::sim::SimConfig prediction;    // the model run to compare with
  double failureRate = 0;             // share of attempts sent with Sim-Fail: before
  idem::sim::Usec latencyMedian = 0;  // live execution latency (Sim-Delay-Ms), µs
  idem::sim::Usec latencyP99 = 0;
  QStringList notes;  // model settings live mode does not drive
};

/// Operations the prediction runs at least (its own noise stays well below the live run's).
inline constexpr std::int64_t kPredictionOperations = 20000;

/// The plan for running model's policy live with settings.
[[nodiscard]] LivePlan planLive(const idem::sim::SimConfig& model, const LiveSettings& settings);

/// The JSON body the route accepts.
[[nodiscard]] QByteArray liveBody(const QString& route);

}  // namespace idem::ui::sim
