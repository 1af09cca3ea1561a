// The causes of duplicates a key cannot catch, each against a case whose answer is known in
// advance: a client that makes a new key for its retry (binomial in new_key_on_retry), cross-key
// detection holding, refusing or missing it by its window, legitimate repeats it wrongly holds,
// an intermediary retrying failures (a geometric series), hedged copies of one key.
#include <QtTest>
#include <cmath>

#include "core/sim/config_parse.h"
#include "core/sim/engine.h"

using namespace idem::sim;

namespace {
constexpr Usec ms(std::int64_t v) { return v * kUsecPerMs; }
constexpr Usec sec(std::int64_t v) { return v * kUsecPerSecond; }
constexpr std::int64_t kOps = 20000;

/// Every execution takes exactly 2 s; the client waits 1 s, then retries once after exactly
/// 100 ms (a timeout only): its retry always finds the first execution still running.
SimConfig slowServerOneRetry() {
  SimConfig c;
  c.seed = 11;
  c.clients.operations = kOps;
  c.clients.arrivalRatePerSecond = 1000;
  c.server.latencyMedian = c.server.latencyP99 = sec(2);
  c.server.fastLatency = ms(2);
  Policy& p = c.policy;
  p.maxAttempts = 2;
  p.timeout = sec(1);
  p.deadline = std::nullopt;
  p.backoff = Backoff::Constant;
  p.jitter = Jitter::None;
  p.base = ms(100);
  p.minDelay = 0;
  p.retryOn = kTimeout;
  p.budget = Budget{};
  return c;
}

/// |observed - n p| within four binomial standard deviations.
void expectBinomial(std::int64_t observed, std::int64_t n, double prob) {
  const double mean = static_cast<double>(n) * prob;
  const double sd = std::sqrt(static_cast<double>(n) * prob * (1 - prob));
  QVERIFY2(std::abs(static_cast<double>(observed) - mean) < 4 * sd,
           qPrintable(QStringLiteral("observed %1, expected %2 ± %3").arg(observed).arg(mean).arg(4 * sd)));
}
}  // namespace

class TestSimCauses : public QObject {
  Q_OBJECT

 private slots:
  void aNewKeyForTheRetryExecutesAgainWithItsProbability() {
    SimConfig c = slowServerOneRetry();
    c.clients.newKeyOnRetry = 0.25;
    const Result r = simulate(c);
    QCOMPARE(r.operations, kOps);
    // Every operation retries once (2 s > 1 s timeout); the same key finds it processing (409),
    // a new key executes it again.
    QCOMPARE(r.attempts, 2 * kOps);
    QCOMPARE(r.duplicates, r.newKeyRetries);
    QCOMPARE(r.duplicatesNewKey, r.duplicates);
    QCOMPARE(r.conflicts409, kOps - r.newKeyRetries);
    expectBinomial(r.duplicates, kOps, 0.25);
    // Without the cause, none.
    c.clients.newKeyOnRetry = 0;
    QCOMPARE(simulate(c).duplicates, 0);
  }

  void detectionHoldsRefusesOrObservesTheNewKey() {
    SimConfig c = slowServerOneRetry();
    c.clients.newKeyOnRetry = 0.25;
    c.store.crossKey.window = sec(600);

    c.store.crossKey.mode = CrossKey::Mode::Hold;
    const Result held = simulate(c);
    QCOMPARE(held.duplicates, 0);
    QVERIFY(held.newKeyRetries > 0);
    QCOMPARE(held.crossKey.matches, held.newKeyRetries);
    QCOMPARE(held.crossKey.held, held.newKeyRetries);
    QVERIFY(held.counterpart.has_value());
    QCOMPARE(held.counterpart->mode, CrossKey::Mode::Off);
    expectBinomial(held.counterpart->duplicates, kOps, 0.25);

    c.store.crossKey.mode = CrossKey::Mode::Reject;
    const Result rejected = simulate(c);
    QCOMPARE(rejected.duplicates, 0);
    QCOMPARE(rejected.crossKey.rejected, rejected.newKeyRetries);

    c.store.crossKey.mode = CrossKey::Mode::Observe;
    const Result observed = simulate(c);
    QCOMPARE(observed.duplicates, observed.newKeyRetries);
    QCOMPARE(observed.crossKey.matches, observed.newKeyRetries);
    QCOMPARE(observed.crossKey.held + observed.crossKey.rejected, 0);
    QVERIFY(observed.counterpart.has_value());
    QCOMPARE(observed.counterpart->mode, CrossKey::Mode::Hold);
    QCOMPARE(observed.counterpart->duplicates, 0);
  }

  void aWindowShorterThanTheRetryGapCatchesNothing() {
    SimConfig c = slowServerOneRetry();
    c.clients.newKeyOnRetry = 0.25;
    c.store.crossKey.mode = CrossKey::Mode::Hold;
    c.store.crossKey.window = ms(1000);  // the retry comes 1.1 s after the execution began
    const Result r = simulate(c);
    QCOMPARE(r.crossKey.matches, 0);
    QCOMPARE(r.duplicates, r.newKeyRetries);
    expectBinomial(r.duplicates, kOps, 0.25);
  }

  void aHeldClientThatRetriesOutlastsTheWindow() {
    // Always a new key, 409 retried after 100 ms: attempts at 1.1 s, 1.202 s and 1.304 s after
    // the execution began (each hold answers in 2 ms). A 1.25 s window holds two of them; the
    // third runs the charge again. A window past the last attempt holds all three.
    SimConfig c = slowServerOneRetry();
    c.clients.newKeyOnRetry = 1;
    c.policy.maxAttempts = 4;
    c.policy.retryOn = kTimeout | kConflict409;
    c.server.conflictRetryAfter = 0;
    c.policy.retryAfter = RetryAfterMode::Ignore;
    c.store.crossKey.mode = CrossKey::Mode::Hold;
    c.store.crossKey.window = ms(1250);
    const Result shortWindow = simulate(c);
    QCOMPARE(shortWindow.crossKey.held, 2 * kOps);
    QCOMPARE(shortWindow.duplicates, kOps);
    c.store.crossKey.window = sec(10);
    const Result longWindow = simulate(c);
    QCOMPARE(longWindow.crossKey.held, 3 * kOps);
    QCOMPARE(longWindow.duplicates, 0);
  }

  void legitimateRepeatsAreWhatDetectionWronglyHolds() {
    SimConfig c = slowServerOneRetry();
    c.policy.maxAttempts = 1;  // no retries: every match is a legitimate repeat
    c.clients.sameBodyShare = 0.1;
    c.store.crossKey.mode = CrossKey::Mode::Hold;
    const Result r = simulate(c);
    QCOMPARE(r.duplicates, 0);
    QCOMPARE(r.crossKey.matches, r.crossKey.legitimateMatches);
    QCOMPARE(r.crossKey.held, r.crossKey.legitimateMatches);
    // A 409 the client does not retry: each held repeat never runs.
    QCOMPARE(r.crossKey.legitimateRefused, r.crossKey.legitimateMatches);
    expectBinomial(r.crossKey.legitimateMatches, kOps, 0.1);
    // Off: the same repeats all run.
    c.store.crossKey.mode = CrossKey::Mode::Off;
    const Result off = simulate(c);
    QCOMPARE(off.crossKey.matches, 0);
    QCOMPARE(off.executions, kOps);
  }

  void anIntermediaryRetriesFailuresTheClientNeverSees() {
    // Half the requests fail before execution (500); the client never retries, the mesh retries
    // twice: a client sees the failure with probability 0.5^3, the server 1 + 0.5 + 0.25 tries.
    SimConfig c = slowServerOneRetry();
    c.policy.maxAttempts = 1;
    c.policy.timeout = sec(30);
    c.server.latencyMedian = c.server.latencyP99 = ms(10);
    c.server.failureRate = 0.5;
    const Result bare = simulate(c);
    expectBinomial(bare.status500, kOps, 0.5);

    c.intermediary = parseConfigText(R"({"intermediary": {"max_retries": 2, "retry_on": ["5xx"]}})").intermediary;
    const Result meshed = simulate(c);
    expectBinomial(kOps - meshed.successes, kOps, 0.125);
    QCOMPARE(meshed.attempts, kOps + meshed.intermediaryRetries);
    const double triesPerOp = static_cast<double>(meshed.attempts) / kOps;
    QVERIFY2(std::abs(triesPerOp - 1.75) < 0.03, qPrintable(QString::number(triesPerOp)));
    QCOMPARE(meshed.duplicates, 0);  // the same key each time: nothing runs twice
  }

  void hedgedCopiesOfOneKey() {
    // Executions take 2 s; a copy of the same request goes out after 500 ms.
    SimConfig c = slowServerOneRetry();
    c.policy.maxAttempts = 1;
    c.policy.timeout = sec(5);
    c.hedging.enabled = true;
    c.hedging.delay = ms(500);
    c.hedging.maxCopies = 2;
    // The copy finds the key processing: 409, fatal by default: the call fails though it ran.
    const Result fatal = simulate(c);
    QCOMPARE(fatal.hedgedCopies, kOps);
    QCOMPARE(fatal.conflicts409, kOps);
    QCOMPARE(fatal.successes, 0);
    QCOMPARE(fatal.executions, kOps);
    // 409 listed as non-fatal: the first copy's answer wins.
    c.hedging.nonFatal = kConflict409;
    const Result tolerant = simulate(c);
    QCOMPARE(tolerant.successes, kOps);
    QCOMPARE(tolerant.duplicates, 0);
    // A store that records the key only at completion runs every copy.
    c.store.storedAt = Store::StoredAt::Completion;
    const Result late = simulate(c);
    QCOMPARE(late.duplicates, kOps);
    QCOMPARE(late.duplicatesConcurrent, kOps);
  }

  void theConfigReadsAndWritesTheCauses() {
    const SimConfig c = parseConfigText(R"({
      "clients": {"operations": 10, "new_key_on_retry": 0.3, "same_body_share": 0.01},
      "store": {"cross_key": {"mode": "hold", "window": "10m"}},
      "intermediary": {"preset": "envoy-retriable-4xx"},
      "hedging": {"delay": "300ms", "max_copies": 3, "non_fatal": ["409"]}})");
    QCOMPARE(c.clients.newKeyOnRetry, 0.3);
    QCOMPARE(c.store.crossKey.mode, CrossKey::Mode::Hold);
    QCOMPARE(c.store.crossKey.window, sec(600));
    QVERIFY(c.intermediary.enabled);
    QCOMPARE(c.intermediary.retry.maxAttempts, 2);
    QVERIFY((c.intermediary.retry.retryOn & kConflict409) != 0);
    QCOMPARE(c.hedging.maxCopies, 3);
    // Written back, it reads the same.
    const SimConfig again = parseConfig(nlohmann::json::parse(configToJson(c).dump()));
    QCOMPARE(configToJson(again).dump(), configToJson(c).dump());
    // Errors name the field.
    const auto error = [](const char* text) {
      try {
        (void)parseConfigText(text);
      } catch (const ConfigError& e) {
        return QString::fromStdString(e.field());
      }
      return QString();
    };
    QCOMPARE(error(R"({"store": {"cross_key": {"mode": "maybe"}}})"), QStringLiteral("store.cross_key.mode"));
    QCOMPARE(error(R"({"intermediary": {"preset": "linkerd"}})"), QStringLiteral("intermediary.preset"));
    QCOMPARE(error(R"({"intermediary": {"retry_on": ["timeout"]}})"), QStringLiteral("intermediary.retry_on"));
    QCOMPARE(error(R"({"hedging": {"max_copies": 9}})"), QStringLiteral("hedging.max_copies"));
    QCOMPARE(error(R"({"clients": {"new_key_on_retry": 2}})"), QStringLiteral("clients.new_key_on_retry"));
  }
};

QTEST_APPLESS_MAIN(TestSimCauses)
#include "tst_sim_causes.moc"
