// What a real `idemctl serve` process spends under abuse, read from /proc: request bodies held
// in memory are bounded across connections (not only per request) and given back, and at the
// file descriptor limit accepting pauses instead of spinning a core.
#include <sys/resource.h>
#include <unistd.h>

#include <QtTest>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/process_memory.h"
#include "tests/endpoint/raw_http.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;
using namespace std::chrono_literals;
using test::exchange;
using test::kResidentMemoryMeaningful;
using test::residentKiB;
using test::statusOf;

namespace {
const std::string kMetrics = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

// At the descriptor limit UBSan's own probe of an object's memory (it opens a pipe) fails, and it
// then reports every dynamic-type check it cannot finish as an "invalid vptr" on a sound object
// (seen on asio's strand release). For the one child held at the limit, those checks are
// suppressed by a file written here; a build without UBSan ignores the variable.
class VptrChecksOffAtTheLimit {
 public:
  VptrChecksOffAtTheLimit() {
    const char* old = std::getenv("UBSAN_OPTIONS");
    m_old = old ? std::optional<std::string>(old) : std::nullopt;
    const auto file = std::filesystem::temp_directory_path() / ("idem-ubsan-" + std::to_string(getpid()) + ".supp");
    std::ofstream(file) << "vptr:*\n";  // the check's -fsanitize name: any file
    m_file = file;
    const std::string options = (m_old ? *m_old + ":" : std::string()) + "suppressions=" + file.string();
    setenv("UBSAN_OPTIONS", options.c_str(), 1);
  }
  VptrChecksOffAtTheLimit(const VptrChecksOffAtTheLimit&) = delete;
  VptrChecksOffAtTheLimit& operator=(const VptrChecksOffAtTheLimit&) = delete;
  ~VptrChecksOffAtTheLimit() {
    if (m_old) setenv("UBSAN_OPTIONS", m_old->c_str(), 1);
    else unsetenv("UBSAN_OPTIONS");
    std::error_code ignored;
    std::filesystem::remove(m_file, ignored);
  }

 private:
  std::optional<std::string> m_old;
  std::filesystem::path m_file;
};

// CPU time (user + system) a process has used, in seconds.
double cpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));  // fields after "(comm)"
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; rest >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoll(field);
    if (i == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long long openDescriptors(pid_t pid) {
  long long n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++n;
  return n;
}

constexpr long long kMiB = 1024 * 1024;
}  // namespace

class TestResourceBounds : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

  // Opens `count` connections that each declare a 1 MiB body, send 768 KiB of it and stall.
  // Returns how many were refused with 503 + Retry-After before their body was read.
  static int stallBodies(int port, int count, std::vector<std::unique_ptr<test::RawConnection>>& held) {
    const std::string head = "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(kMiB) + "\r\n\r\n";
    const std::string part(768 * 1024, ' ');
    for (int i = 0; i < count; ++i) {
      held.push_back(std::make_unique<test::RawConnection>(port));
      held.back()->send(head);
    }
    std::this_thread::sleep_for(300ms);
    int refused = 0;
    for (auto& c : held) {
      const std::string r = c->response(10ms);
      if (statusOf(r) == 503 && r.find("Retry-After: 1") != std::string::npos) {
        ++refused;
        continue;
      }
      c->send(part);
    }
    std::this_thread::sleep_for(1s);
    return refused;
  }

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("ep_resources"); }
  void cleanupTestCase() { m_db.reset(); }

  // #10, transport half: 64 stalled 1 MiB bodies against a 16 MiB budget. 16 are read (their
  // bytes counted in /metrics), 48 get 503 + Retry-After before a body byte is read, the process
  // grows by about what the budget allows, and all of it is given back when they leave, twice over.
  void bodiesAreBoundedAcrossConnections() {
    test::ServeProcess s({"--db", m_db->conninfo(), "--max-body", std::to_string(kMiB), "--max-buffered-body",
                          std::to_string(16 * kMiB)});
    QCOMPARE(statusOf(exchange(s.port(), test::kHealthRequest)), 200);
    const long long baseline = residentKiB(s.pid());
    for (int round = 0; round < 2; ++round) {
      std::vector<std::unique_ptr<test::RawConnection>> held;
      const int refused = stallBodies(s.port(), 64, held);
      QCOMPARE(refused, 48);
      const std::string metrics = exchange(s.port(), kMetrics);
      QCOMPARE(test::metricValue(metrics, "idem_http_body_bytes_buffered"), 16 * kMiB);
      QCOMPARE(test::metricValue(metrics, "idem_http_body_budget_refusals_total"), 48LL * (round + 1));
      const long long grown = residentKiB(s.pid()) - baseline;
      qInfo("round %d: resident +%lld KiB with 16 bodies of 768 KiB held", round, grown);
      if (kResidentMemoryMeaningful) QVERIFY2(grown < 32 * 1024, ("grew " + std::to_string(grown) + " KiB").c_str());
      held.clear();
      // Given back once the server has seen each connection close: polled, since under a
      // sanitizer on a loaded machine that took longer than a fixed second (ASan, CI's selection).
      QTRY_COMPARE_WITH_TIMEOUT(test::metricValue(exchange(s.port(), kMetrics), "idem_http_body_bytes_buffered"), 0LL,
                                15000);
      const long long after = residentKiB(s.pid()) - baseline;
      qInfo("round %d: resident +%lld KiB after they left", round, after);
      if (kResidentMemoryMeaningful)
        QVERIFY2(after < 6 * 1024, ("still +" + std::to_string(after) + " KiB after the bodies left").c_str());
    }
  }

  // A chunked body takes its bytes from the budget as it arrives and is 503 when it passes it.
  void chunkedBodyPastTheBudgetIs503() {
    test::ServeProcess s({"--db", m_db->conninfo(), "--max-body", std::to_string(kMiB), "--max-buffered-body",
                          std::to_string(kMiB)});
    test::RawConnection holder(s.port());  // holds 768 KiB of the 1 MiB budget
    holder.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(768 * 1024) + "\r\n\r\n" + std::string(1024, ' '));
    std::this_thread::sleep_for(300ms);
    test::RawConnection chunked(s.port());
    chunked.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n");
    const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";  // 64 KiB each
    std::string answer;
    for (int i = 0; i < 8 && answer.empty(); ++i) {
      chunked.send(chunk);
      answer = chunked.response(200ms);
    }
    QVERIFY2(statusOf(answer) == 503 && answer.find("Retry-After: 1") != std::string::npos, answer.c_str());
  }

  // #2, accept half: at the descriptor limit accept() failed at once, again and again (a core at
  // 40 %). Now it pauses and retries on a timer: the process stays nearly idle, counts the pauses,
  // and serves again once descriptors free up.
  void acceptPausesAtTheDescriptorLimit() {
    std::optional<test::ServeProcess> started;
    {
      const VptrChecksOffAtTheLimit forThisChild;  // the child reads its environment at start
      started.emplace(std::vector<std::string>{"--db", m_db->conninfo()});
    }
    auto& s = *started;
    QCOMPARE(statusOf(exchange(s.port(), test::kHealthRequest)), 200);
    const long long open = openDescriptors(s.pid());
    rlimit before{};
    QVERIFY(prlimit(s.pid(), RLIMIT_NOFILE, nullptr, &before) == 0);
    const rlimit tight{static_cast<rlim_t>(open + 3), before.rlim_max};  // the soft limit, as ulimit -n
    QVERIFY(prlimit(s.pid(), RLIMIT_NOFILE, &tight, nullptr) == 0);
    std::vector<std::unique_ptr<test::RawConnection>> waiting;
    for (int i = 0; i < 10; ++i) waiting.push_back(std::make_unique<test::RawConnection>(s.port()));
    std::this_thread::sleep_for(500ms);
    const double cpuBefore = cpuSeconds(s.pid());
    std::this_thread::sleep_for(2s);
    const double used = cpuSeconds(s.pid()) - cpuBefore;
    qInfo("CPU at the descriptor limit: %.2f s in 2 s", used);
    QVERIFY2(used < 0.2, ("the process used " + std::to_string(used) + " s of CPU in 2 s at the fd limit").c_str());
    waiting.clear();  // descriptors free up as the server sees them close
    std::this_thread::sleep_for(500ms);
    QCOMPARE(statusOf(exchange(s.port(), test::kHealthRequest, 5s)), 200);
    QVERIFY(prlimit(s.pid(), RLIMIT_NOFILE, &before, nullptr) == 0);
    QVERIFY(test::metricValue(exchange(s.port(), kMetrics), "idem_http_accept_pauses_total") > 0);
  }
};

QTEST_GUILESS_MAIN(TestResourceBounds)
#include "tst_resourcebounds.moc"
