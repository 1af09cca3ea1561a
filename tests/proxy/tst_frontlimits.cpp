// The transport's checks as `idemctl proxy` meets them, over raw loopback sockets: trailer
// fields never reach the enforcement or the upstream as headers, a method in the wrong case is
// refused before it could be forwarded unenforced, the header limit is what the parser holds,
// one client cannot take every slot, and the admin plane answers while every handler thread
// waits on a slow upstream.
#include <QProcess>
#include <QtTest>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/endpoint/raw_http.h"
#include "tests/proxy/proxy_support.h"

using namespace idem;
using namespace std::chrono_literals;
using nlohmann::json;
using test::exchange;
using test::bodyOf;
using test::chunkedWithTrailers;
using test::statusOf;

namespace {


}  // namespace

class TestProxyFrontLimits : public QObject {
  Q_OBJECT

 private slots:
  // #4: a tenant header sent only as a trailer got another tenant's stored answer.
  void trailerIsNeverATenant() {
    test::ProxyRig rig("px_trailer_tenant", {"--tenant-header", "X-Tenant-Id"});
    auto c = rig.client();
    const auto alice = c->post("/v1/charges", test::charge("tr-1", {{"X-Tenant-Id", "acct_a"}}), test::kCharge);
    QCOMPARE(alice.status, 201);
    const std::string mallory = exchange(
        rig.proxy->port(),
        chunkedWithTrailers("POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            "Idempotency-Key: tr-1\r\n",
                            test::kCharge, "X-Tenant-Id: acct_a\r\n"));
    QVERIFY2(mallory.find("Idempotent-Replayed") == std::string::npos, mallory.c_str());
    QVERIFY2(mallory.find(json::parse(alice.body).value("id", "?")) == std::string::npos, mallory.c_str());
    QCOMPARE(statusOf(mallory), 400);  // no tenant: refused rather than shared
    QCOMPARE(rig.upstream.executions("tr-1", "acct_a"), 1);
  }

  // Trailers reached the upstream as headers, past the 415 on compressed bodies and --max-headers.
  void trailersNeverReachTheUpstream() {
    test::ProxyRig rig("px_trailer_fwd", {"--max-headers", "10"});
    const std::string head = "POST /headers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
    const std::string seen =
        exchange(rig.proxy->port(),
                 chunkedWithTrailers(head, "{}", "X-Trailer-Probe: 1\r\nContent-Encoding: gzip\r\n"));
    QVERIFY2(statusOf(seen) == 200, seen.c_str());
    const json headers = json::parse(bodyOf(seen), nullptr, false);
    QVERIFY2(headers.is_object(), seen.c_str());
    QVERIFY2(!headers.contains("X-Trailer-Probe") && !headers.contains("Content-Encoding"), seen.c_str());
    std::string many;
    for (int i = 0; i < 10; ++i) many += "X-T" + std::to_string(i) + ": v\r\n";
    const std::string refused = exchange(rig.proxy->port(), chunkedWithTrailers(head, "{}", many));
    QVERIFY2(statusOf(refused) == 431, refused.substr(0, 300).c_str());
  }

  // #13: "post" skipped the key-required tier and was forwarded unenforced.
  void methodInWrongCaseIsRefused() {
    test::ProxyRig rig("px_method_case");
    const std::string r = exchange(rig.proxy->port(),
                                   "post /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                   "Content-Length: " +
                                       std::to_string(test::kCharge.size()) + "\r\nConnection: close\r\n\r\n" +
                                       test::kCharge);
    QVERIFY2(statusOf(r) == 400, r.c_str());
    QVERIFY2(json::parse(bodyOf(r), nullptr, false).value("type", "").ends_with("#method-case"), r.c_str());
    auto c = rig.client();
    QCOMPARE(json::parse(c->get("/executions").body).value("total", -1), 0);
  }

  // #3: the proxy takes no --max-header-bytes its parser cannot hold (a 70 000-byte field
  // under a 1 MiB limit ended the process).
  void headerLimitIsWhatTheParserHolds() {
    test::ProxyRig rig("px_header_cap", {"--max-header-bytes", "65536"});
    QProcess p;
    p.start(QString::fromLocal8Bit(qgetenv("IDEMCTL")),
            {"proxy", "--db", QString::fromStdString(rig.db.conninfo()), "--policy",
             QString::fromStdString((rig.dir / "policy.json").string()), "--upstream",
             QString::fromStdString(rig.upstream.url()), "--max-header-bytes", "1048576"});
    QVERIFY(p.waitForFinished(20000));
    const std::string err = p.readAllStandardError().toStdString();
    QVERIFY2(p.exitCode() == 2 && err.find("--max-header-bytes") != std::string::npos, err.c_str());
    const std::string over = exchange(rig.proxy->port(), "GET /headers HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                                             std::string(70'000, 'b') + "\r\nConnection: close\r\n\r\n");
    QCOMPARE(statusOf(over), 431);
    QVERIFY(rig.proxy->alive());
    QCOMPARE(statusOf(exchange(rig.adminPort(), test::kHealthRequest)), 200);
  }

  // #9: one client holding its share of connections (half of 32) leaves room for others.
  void oneClientCannotTakeEverySlot() {
    test::ProxyRig rig("px_client_share", {"--max-connections", "32"});
    std::vector<std::unique_ptr<test::RawConnection>> a;
    for (int i = 0; i < 32; ++i) a.push_back(std::make_unique<test::RawConnection>(rig.proxy->port()));
    std::this_thread::sleep_for(300ms);
    int refused = 0;
    for (auto& c : a) refused += statusOf(c->response(20ms)) == 429 ? 1 : 0;
    QCOMPARE(refused, 32 - 16);
    QCOMPARE(statusOf(exchange(rig.proxy->port(), "GET /headers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 3s,
                               "127.0.0.2")),
             200);
  }

  // #1: with more slow charges in flight than --threads, the admin /healthz still answers at
  // once (on serve, where handlers block, endpoint_tst_frontlimits shows it has threads of its own).
  void adminPlaneNeverWaitsBehindApplicationWork() {
    test::ProxyRig rig("px_admin_plane", {"--threads", "2"});

    std::vector<std::future<std::string>> slow;
    for (int i = 0; i < 4; ++i)
      slow.push_back(std::async(std::launch::async, [&rig, i] {
        return exchange(rig.proxy->port(),
                        "POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Idempotency-Key: slow-" +
                            std::to_string(i) + "\r\nX-Test-Sleep-Ms: 4000\r\nContent-Length: " +
                            std::to_string(test::kCharge.size()) + "\r\nConnection: close\r\n\r\n" + test::kCharge,
                        20s);
      }));
    std::this_thread::sleep_for(700ms);  // four charges now wait on the upstream
    // No thread waits on the upstream (the exchange runs on the event loop), so the application
    // port still answers too ...
    QCOMPARE(statusOf(exchange(rig.proxy->port(), "GET /headers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                               1s, "127.0.0.2")),
             200);
    // ... and the admin plane answers promptly.
    const auto start = std::chrono::steady_clock::now();
    const std::string health = exchange(rig.adminPort(), test::kHealthRequest, 10s);
    const auto took = std::chrono::steady_clock::now() - start;
    QCOMPARE(statusOf(health), 200);
    QVERIFY2(took < 1500ms, ("admin /healthz took " +
                             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) + " ms")
                                .c_str());
    for (auto& f : slow) QCOMPARE(statusOf(f.get()), 201);
  }
};

QTEST_GUILESS_MAIN(TestProxyFrontLimits)
#include "tst_frontlimits.moc"
