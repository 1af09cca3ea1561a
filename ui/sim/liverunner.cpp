#include "ui/sim/liverunner.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>
#include <QUrlQuery>
#include <cmath>

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {
namespace {

// How long a timed-out execution may still run at the server: Sim-Delay-Ms is capped there.
constexpr qint64 kMaxSimDelayMs = 60000;

}  // namespace

LiveRunner::LiveRunner(QObject* parent) : QObject(parent) {}

LiveRunner::~LiveRunner() {
  if (isRunning()) stop(true);
}

QNetworkAccessManager* LiveRunner::managerFor(int op) {
  // One manager per client: a manager keeps at most six connections per host, which would
  // queue the requests of more than six concurrent clients inside Qt, not at the server.
  return m_managers.at(op % m_managers.size());
}

void LiveRunner::start(const LiveSettings& settings, const LivePlan& plan) {
  if (isRunning()) stop(true);
  ++m_generation;
  m_settings = settings;
  m_plan = plan;
  m_result = {};
  m_result.keyPrefix = settings.keyPrefix;
  for (Op& op : m_ops) delete op.timer;
  m_ops.assign(static_cast<std::size_t>(std::max(0, settings.operations)), Op{});
  for (std::size_t i = 0; i < m_ops.size(); ++i) m_ops[i].key = settings.keyPrefix + QString::number(i + 1);
  m_next = m_active = m_ledgerNext = m_ledgerDone = 0;
  m_serverBusyUntilUs = 0;
  qDeleteAll(m_managers);
  m_managers.clear();
  for (int i = 0; i < std::max(1, settings.clients); ++i) m_managers << new QNetworkAccessManager(this);
  m_rng = std::make_unique<core::Rng>(plan.prediction.seed);
  m_budget = std::make_unique<core::RetryBudget>(plan.livePolicy.budget);
  const double median = std::max<double>(1.0, static_cast<double>(plan.latencyMedian));
  m_mu = std::log(median);
  m_sigma = plan.latencyP99 > plan.latencyMedian ? std::log(static_cast<double>(plan.latencyP99) / median) / 2.326 : 0;
  m_clock.start();
  m_phase = Phase::Driving;
  emit progress(0, settings.operations, tr("driving the endpoint"));
  fillSlots();
}

void LiveRunner::fillSlots() {
  while (m_phase == Phase::Driving && m_active < m_settings.clients && m_next < static_cast<int>(m_ops.size())) {
    const int op = m_next++;
    ++m_active;
    m_ops[static_cast<std::size_t>(op)].t0Us = nowUs();
    m_budget->onFirstAttempt(nowUs());
    send(op);
  }
  if (m_phase == Phase::Driving && m_active == 0 && m_next >= static_cast<int>(m_ops.size())) drain();
}

void LiveRunner::send(int index) {
  Op& op = m_ops[static_cast<std::size_t>(index)];
  ++op.attempt;
  ++m_result.attempts;
  QUrl url = m_settings.endpoint;
  url.setPath(m_settings.route);
  QNetworkRequest request(url);
  request.setHeader(QNetworkRequest::ContentTypeHeader, u"application/json"_s);
  request.setRawHeader("Idempotency-Key", op.key.toUtf8());
  if (!m_settings.tenantHeader.isEmpty())
    request.setRawHeader(m_settings.tenantHeader.toUtf8(), m_settings.tenant.toUtf8());
  // The server model, injected: a failure before execution, or how long the execution takes.
  if (m_rng->chance(m_plan.failureRate)) {
    request.setRawHeader("Sim-Fail", "before");
  } else {
    const double us = m_sigma > 0 ? std::exp(m_mu + m_sigma * m_rng->normal()) : std::exp(m_mu);
    const qint64 ms = std::clamp<qint64>(std::llround(us / 1000.0), 0, kMaxSimDelayMs);
    if (ms > 0) request.setRawHeader("Sim-Delay-Ms", QByteArray::number(ms));
    m_serverBusyUntilUs = std::max(m_serverBusyUntilUs, nowUs() + ms * 1000);
  }
  QNetworkReply* reply = managerFor(index)->post(request, liveBody(m_settings.route));
  op.reply = reply;
  op.timedOut = false;
  const quint64 generation = m_generation;
  connect(reply, &QNetworkReply::finished, this, [this, index, reply, generation] {
    reply->deleteLater();
    if (generation == m_generation && m_phase == Phase::Driving) answered(index, reply);
  });
  // The client stops waiting at its timeout, or at the operation's deadline if sooner; the
  // server carries on with the work (that is the point of the exercise).
  std::optional<qint64> waitUs = m_plan.livePolicy.timeout;
  if (m_plan.livePolicy.deadline) {
    const qint64 left = op.t0Us + *m_plan.livePolicy.deadline - nowUs();
    waitUs = waitUs ? std::min(*waitUs, left) : left;
  }
  if (waitUs) {
    if (!op.timer) {
      op.timer = new QTimer(this);
      op.timer->setSingleShot(true);
      op.timer->setTimerType(Qt::PreciseTimer);
      connect(op.timer, &QTimer::timeout, this, [this, index] {
        Op& o = m_ops[static_cast<std::size_t>(index)];
        if (!o.reply) return;
        o.timedOut = true;
        o.reply->abort();
      });
    }
    op.timer->start(static_cast<int>(std::max<qint64>(1, *waitUs / 1000)));
  }
}

void LiveRunner::answered(int index, QNetworkReply* reply) {
  Op& op = m_ops[static_cast<std::size_t>(index)];
  if (op.timer) op.timer->stop();
  op.reply = nullptr;
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  std::optional<core::Usec> retryAfter;
  if (reply->hasRawHeader("Retry-After")) {
    bool ok = false;
    const double s = reply->rawHeader("Retry-After").toDouble(&ok);
    if (ok) retryAfter = static_cast<core::Usec>(s * 1e6);
  }
  if (op.timedOut) {
    ++m_result.timeouts;
    failed(index, core::kTimeout, std::nullopt);
  } else if (status >= 200 && status < 300) {
    ++m_result.successes;
    m_budget->onSuccess(op.lastRetryCost);
    finishOp(index);
  } else if (status == 409) {
    ++m_result.conflicts409;
    failed(index, core::kConflict409, retryAfter);
  } else if (status == 503) {
    ++m_result.status503;
    failed(index, core::kStatus503, retryAfter);
  } else if (status >= 500) {
    ++m_result.status500;
    failed(index, core::kStatus500, std::nullopt);
  } else if (status == 0) {
    ++m_result.connectionErrors;
    if (m_result.firstError.isEmpty()) m_result.firstError = reply->errorString();
    failed(index, core::kConnectionError, std::nullopt);
  } else {
    ++m_result.otherStatus;
    if (m_result.firstError.isEmpty())
      m_result.firstError = tr("HTTP %1: %2").arg(status).arg(QString::fromUtf8(reply->readAll().left(300)));
    finishOp(index);
  }
}

void LiveRunner::failed(int index, unsigned outcome, std::optional<core::Usec> retryAfter) {
  // The same decision as the core engine's client (engine.cpp, failed()), on live time.
  Op& op = m_ops[static_cast<std::size_t>(index)];
  const core::Policy& p = m_plan.livePolicy;
  if ((p.retryOn & outcome) == 0) return finishOp(index);
  m_budget->onQualifiedFailure();
  if (op.attempt >= p.maxAttempts) return finishOp(index);
  const core::Usec backoff = core::backoffDelay(p, op.attempt, op.backoff, *m_rng);
  const auto honoured = retryAfter ? core::honouredRetryAfter(p, *retryAfter) : std::nullopt;
  const core::Usec sleep = core::combineWithRetryAfter(p, backoff, honoured);
  const qint64 now = nowUs();
  if (p.deadline && now + sleep >= op.t0Us + *p.deadline) return finishOp(index);
  double cost = 0;
  if (!m_budget->tryAcquire(now, outcome == core::kTimeout, &cost)) {
    ++m_result.budgetRefused;
    return finishOp(index);
  }
  if (p.budget.type == core::Budget::Type::TokenBucket && p.budget.style == core::Budget::Style::Aws)
    op.lastRetryCost = cost;
  const quint64 generation = m_generation;
  QTimer::singleShot(static_cast<int>(sleep / 1000), Qt::PreciseTimer, this, [this, index, generation] {
    if (generation == m_generation && m_phase == Phase::Driving) send(index);
  });
}

void LiveRunner::finishOp(int) {
  --m_active;
  ++m_result.operations;
  emit progress(static_cast<int>(m_result.operations), static_cast<int>(m_ops.size()), tr("driving the endpoint"));
  fillSlots();
}

void LiveRunner::drain() {
  // Executions whose clients timed out may still be running: wait until the last could have
  // finished, so the ledger shows every execution.
  m_phase = Phase::Draining;
  const qint64 waitMs = std::max<qint64>(0, (m_serverBusyUntilUs - nowUs()) / 1000) + 200;
  emit progress(static_cast<int>(m_ops.size()), static_cast<int>(m_ops.size()),
                tr("waiting %1 ms for executions still running at the server").arg(waitMs));
  const quint64 generation = m_generation;
  QTimer::singleShot(static_cast<int>(waitMs), this, [this, generation] {
    if (generation != m_generation || m_phase != Phase::Draining) return;
    m_result.elapsedS = static_cast<double>(nowUs()) / 1e6;
    m_phase = Phase::Ledger;
    for (int i = 0; i < m_settings.clients; ++i) checkLedger();
  });
}

void LiveRunner::checkLedger() {
  if (m_phase != Phase::Ledger || m_ledgerNext >= static_cast<int>(m_ops.size())) return;
  const int index = m_ledgerNext++;
  QUrl url = m_settings.endpoint;
  url.setPath(m_settings.route);
  QUrlQuery query;
  query.addQueryItem(u"idempotency_key"_s, m_ops[static_cast<std::size_t>(index)].key);
  query.addQueryItem(u"limit"_s, u"100"_s);
  url.setQuery(query);
  QNetworkRequest request(url);
  if (!m_settings.tenantHeader.isEmpty())
    request.setRawHeader(m_settings.tenantHeader.toUtf8(), m_settings.tenant.toUtf8());
  QNetworkReply* reply = managerFor(index)->get(request);
  const quint64 generation = m_generation;
  connect(reply, &QNetworkReply::finished, this, [this, reply, generation] {
    reply->deleteLater();
    if (generation == m_generation && m_phase == Phase::Ledger) ledgerAnswered(reply);
  });
}

void LiveRunner::ledgerAnswered(QNetworkReply* reply) {
  const QJsonDocument doc = QJsonDocument::fromJson(reply->readAll());
  if (reply->error() != QNetworkReply::NoError || !doc.object().value(u"data"_s).isArray()) {
    ++m_result.ledgerErrors;
    if (m_result.firstError.isEmpty()) m_result.firstError = tr("ledger: %1").arg(reply->errorString());
  } else {
    // Every row is one execution (the channel's side); rows beyond the first are duplicates.
    const qint64 rows = doc.object().value(u"data"_s).toArray().size();
    m_result.executions += rows;
    m_result.duplicates += std::max<qint64>(0, rows - 1);
  }
  ++m_ledgerDone;
  emit progress(m_ledgerDone, static_cast<int>(m_ops.size()), tr("reading the ledger"));
  if (m_ledgerDone == static_cast<int>(m_ops.size())) return stop(false);
  checkLedger();
}

void LiveRunner::cancel() {
  if (isRunning()) stop(true);
}

void LiveRunner::stop(bool cancelled) {
  ++m_generation;
  m_phase = Phase::Idle;
  for (Op& op : m_ops) {
    if (op.timer) op.timer->stop();
    if (op.reply) op.reply->abort();
  }
  if (m_result.elapsedS == 0) m_result.elapsedS = static_cast<double>(nowUs()) / 1e6;
  emit finished(cancelled);
}

}  // namespace idem::ui::sim
