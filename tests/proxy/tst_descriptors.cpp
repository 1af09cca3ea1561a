// The proxy under the usual service limit of 1024 descriptors (prlimit on the proxy process):
// many keyed requests to a slow upstream at once must never store an outcome for a key the
// upstream never received — a request the proxy could not send is released (503/502 with
// Retry-After), not recorded as "may have taken effect". And a limit the settings cannot live
// within is refused at start, naming the flags.
#include <signal.h>
#include <sys/resource.h>

#include <QtTest>
#include <future>

#include "core/client/client.h"
#include "tests/proxy/raw_upstream.h"

using namespace idem;

namespace {
// (ordinary literals: moc cannot parse raw strings)
const char* const kPolicy =
    "{\n"
    "  \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [ { \"name\": \"slow\", \"routes\": [\"POST /v1/slow\"], \"ttl\": \"1h\", \"lease\": \"30s\" } ]\n"
    "}\n";
}  // namespace

class TestDescriptors : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // The test's own 400 client sockets must not be what runs out.
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
    // A connection the proxy refuses at accept (over its client budget) is closed under the writer.
    signal(SIGPIPE, SIG_IGN);
  }

  void noKeyTheUpstreamNeverReceivedIsStored() {
    test::RawUpstreamRig rig("px_fds", kPolicy, {"--threads", "300"}, {"/usr/bin/prlimit", "--nofile=1024:1024"});
    constexpr int kRequests = 400;
    std::vector<std::future<client::ClientResponse>> sent;
    for (int i = 0; i < kRequests; ++i)
      sent.push_back(std::async(std::launch::async, [port = rig.proxy->port(), i] {
        client::Client c("127.0.0.1", port, std::chrono::seconds(60));
        return c.post("/v1/slow",
                      {{"Content-Type", "application/json"},
                       {"Idempotency-Key", "fd-" + std::to_string(i)},
                       {"X-Test-Sleep-Ms", "3000"}},
                      "{}");
      }));
    int refusedBeforeSending = 0;
    for (auto& f : sent) {
      const auto r = f.get();
      // 0: refused at accept (over the client budget) and reset before the 503 was read; 429:
      // over the per-client connection limit (--max-connections-per-client), refused at accept.
      QVERIFY2(r.status == 0 || r.status == 201 || r.status == 429 || r.status == 502 || r.status == 503,
               (std::to_string(r.status) + r.body).c_str());
      if (r.status == 0) {
        ++refusedBeforeSending;
        continue;
      }
      if (r.status != 201) {
        QVERIFY(!r.header("Retry-After").empty());
        QVERIFY2(r.body.find("may have") == std::string::npos, r.body.c_str());
        ++refusedBeforeSending;
      }
    }
    auto db = rig.db.connect();
    const auto stored = db.exec("SELECT idem_key, resp_status FROM idem.keys WHERE state = 'done'");
    for (int row = 0; row < stored.rows(); ++row) {
      const std::string key = stored.str(row, "idem_key");
      QVERIFY2(rig.executions(key) == 1, ("stored but never received: " + key).c_str());
      QCOMPARE(stored.str(row, "resp_status"), std::string("201"));
    }
    // Everything not stored was released: the same keys run once the load is gone.
    QCOMPARE(stored.rows() + refusedBeforeSending, kRequests);
    QVERIFY(rig.proxy->alive());
  }

  void aLimitTheSettingsCannotLiveWithinIsRefusedAtStart() {
    bool refused = false;
    try {
      test::RawUpstreamRig rig("px_fdstart", kPolicy, {"--upstream-connections", "512"},
                               {"/usr/bin/prlimit", "--nofile=256:256"});
    } catch (const std::runtime_error&) {
      refused = true;
    }
    QVERIFY(refused);
    std::ifstream in(std::filesystem::temp_directory_path() / ("px_fdstart_" + std::to_string(getpid())) /
                     "proxy.err");
    const std::string log{std::istreambuf_iterator<char>(in), {}};
    QVERIFY2(log.find("--upstream-connections") != std::string::npos, log.c_str());
    QVERIFY2(log.find("256") != std::string::npos, log.c_str());
  }
};

QTEST_GUILESS_MAIN(TestDescriptors)
#include "tst_descriptors.moc"
