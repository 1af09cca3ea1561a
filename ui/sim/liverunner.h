#pragma once
// Live mode: N concurrent clients drive the embedded endpoint over real HTTP with a policy
// (durations already compressed, see liveplan.h), then count each key's executions from the
// endpoint's ledger (GET <route>?idempotency_key=K). Everything runs asynchronously on the
// GUI thread's event loop (QNetworkAccessManager): no blocking call, so the window stays live.
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <memory>
#include <vector>

#include "core/sim/backoff.h"
#include "core/sim/budget.h"
#include "core/sim/rng.h"
#include "ui/sim/liveplan.h"

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace idem::ui::sim {

struct LiveResult {
  qint64 operations = 0;  // operations finished
  qint64 attempts = 0;
  qint64 successes = 0;
  qint64 conflicts409 = 0;
  qint64 status503 = 0;
  qint64 status500 = 0;
  qint64 otherStatus = 0;  // 4xx other than 409: not retried
  qint64 timeouts = 0;
  qint64 connectionErrors = 0;
  qint64 budgetRefused = 0;
  qint64 executions = 0;    // ledger rows over all keys
  qint64 duplicates = 0;    // ledger rows beyond each key's first
  qint64 ledgerErrors = 0;  // keys whose ledger could not be read
  double elapsedS = 0;
  QString keyPrefix;
  QString firstError;  // the first unexpected answer, for the user
  [[nodiscard]] double amplification() const { return operations ? double(attempts) / double(operations) : 0; }
  [[nodiscard]] double successRate() const { return operations ? double(successes) / double(operations) : 0; }
};

class LiveRunner final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(LiveRunner)

 public:
  enum class Phase { Idle, Driving, Draining, Ledger };

  explicit LiveRunner(QObject* parent = nullptr);
  ~LiveRunner() override;

  void start(const LiveSettings& settings, const LivePlan& plan);
  /// Aborts every request in flight; finished(true) follows at once.
  void cancel();
  [[nodiscard]] bool isRunning() const { return m_phase != Phase::Idle; }
  [[nodiscard]] const LiveResult& result() const { return m_result; }

 signals:
  void progress(int done, int total, const QString& what);
  void finished(bool cancelled);

 private:
  struct Op {
    QString key;
    int attempt = 0;
    qint64 t0Us = 0;
    idem::sim::BackoffState backoff;
    double lastRetryCost = -1;
    QPointer<QNetworkReply> reply;
    QTimer* timer = nullptr;
    bool timedOut = false;
  };

  [[nodiscard]] qint64 nowUs() const { return m_clock.nsecsElapsed() / 1000; }
  void fillSlots();
  void send(int op);
  void answered(int op, QNetworkReply* reply);
  void failed(int op, unsigned outcome, std::optional<idem::sim::Usec> retryAfter);
  void finishOp(int op);
  void drain();
  void checkLedger();
  void ledgerAnswered(QNetworkReply* reply);
  void stop(bool cancelled);
  QNetworkAccessManager* managerFor(int op);

  LiveSettings m_settings;
  LivePlan m_plan;
  Phase m_phase = Phase::Idle;
  LiveResult m_result;
  std::vector<Op> m_ops;
  int m_next = 0;    // next operation to start
  int m_active = 0;  // operations started, not finished
  int m_ledgerNext = 0;
  int m_ledgerDone = 0;
  qint64 m_serverBusyUntilUs = 0;  // latest end of an execution the server may still be running
  QList<QNetworkAccessManager*> m_managers;
  QElapsedTimer m_clock;
  std::unique_ptr<idem::sim::Rng> m_rng;
  std::unique_ptr<idem::sim::RetryBudget> m_budget;
  double m_mu = 0;
  double m_sigma = 0;
  quint64 m_generation = 0;
};

}  // namespace idem::ui::sim
