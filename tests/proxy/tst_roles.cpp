// `idemctl proxy` runs as a login member of idem_service (README, "Roles"): it records its
// policy, executes and replays, releases a key when the upstream was not reached, and records
// an outcome_unknown when the upstream died after taking the request.
#include <QtTest>
#include <future>

#include "tests/endpoint/login_role.h"
#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;
using test::kCharge;

class TestProxyRoles : public QObject {
  Q_OBJECT

 private slots:
  void proxyRunsAsIdemService() {
    test::ProxyRig rig("px_roles");
    test::LoginRole service(rig.db, "idem_service");
    rig.proxyDb = service.conninfo;
    rig.startProxy({});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("role-1"), kCharge).status, 201);
    QCOMPARE(c->post("/v1/charges", charge("role-1"), kCharge).header("Idempotent-Replayed"), std::string("true"));

    auto doomed = std::async(std::launch::async, [port = rig.proxy->port()] {
      client::Client k("127.0.0.1", port, std::chrono::seconds(20));
      return k.post("/v1/charges", charge("role-2", {{"X-Test-Sleep-Ms", "5000"}}), kCharge);
    });
    QTRY_COMPARE_WITH_TIMEOUT(rig.upstream.executions("role-2"), 1, 5000);
    rig.upstream.kill9();
    QCOMPARE(doomed.get().status, 502);
    QCOMPARE(c->post("/v1/charges", charge("role-3"), kCharge).status, 502);  // refused: released
    QTRY_COMPARE_WITH_TIMEOUT(rig.events("role-2", "outcome_unknown"), 1LL, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(rig.events("role-3", "released"), 1LL, 5000);
    QVERIFY2(rig.proxyLog().find("permission denied") == std::string::npos, rig.proxyLog().c_str());
  }
};

QTEST_GUILESS_MAIN(TestProxyRoles)
#include "tst_roles.moc"
