// Tenant isolation rests on configuration that is checked (issue 28, scenario 5): a proxy with
// no tenant source is refused at start unless declared single-tenant; a tenant derived from the
// request's credentials keeps different bearer tokens apart without a gateway; the tenant
// source is part of the recorded policy, and a start that would change it under live keys is
// refused; a tenant header is trusted only from the configured peers.
#include <QtTest>
#include <chrono>

#include "core/cluster/localcluster.h"
#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;
using test::kCharge;

namespace {

/// idemctl with a hard stop: a proxy that starts (the old behaviour) instead of refusing is
/// still running after 20 s and exits 124.
int runBounded(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv{"/usr/bin/timeout", "20", std::getenv("IDEMCTL")};
  argv.insert(argv.end(), args.begin(), args.end());
  return cluster::runProgram(argv, out, false);
}

std::vector<std::string> proxyArgs(const test::ProxyRig& rig, std::vector<std::string> extra) {
  std::vector<std::string> args{"proxy",
                                "--db",
                                rig.db.conninfo(),
                                "--policy",
                                (rig.dir / "policy.json").string(),
                                "--upstream",
                                rig.upstream.url(),
                                "--access-log",
                                "off"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

class TestTenantSource : public QObject {
  Q_OBJECT

 private slots:
  void refusedWithoutATenantSource() {
    // The README walkthrough's proxy: a policy without a tenant source, no tenant flag.
    test::TestDatabase db("px_ts_none");
    const std::string policy = "/tmp/px_ts_none_" + std::to_string(getpid()) + ".json";
    std::ofstream(policy) << test::kProxyPolicy;
    std::string out;
    QCOMPARE(runBounded({"proxy", "--db", db.conninfo(), "--policy", policy, "--upstream", "http://127.0.0.1:9",
                         "--listen", "127.0.0.1:0", "--access-log", "off"},
                        &out),
             2);
    std::remove(policy.c_str());
    QVERIFY2(out.find("no tenant source") != std::string::npos, out.c_str());
    for (const char* choice : {"--tenant-header", "--tenant-from-authorization", "--single-tenant"})
      QVERIFY2(out.find(choice) != std::string::npos, out.c_str());
  }

  void differentCredentialsNeverShareKeys() {
    test::ProxyRig rig("px_ts_auth", {"--tenant-from-authorization"});
    auto c = rig.client();
    const auto alice = c->post("/v1/charges", charge("auth-1", {{"Authorization", "Bearer alice"}}), kCharge);
    QCOMPARE(alice.status, 201);
    const auto bob = c->post("/v1/charges", charge("auth-1", {{"Authorization", "Bearer bob"}}), kCharge);
    QCOMPARE(bob.status, 201);
    QVERIFY(bob.header("Idempotent-Replayed").empty());  // Bob never gets Alice's answer
    const auto again = c->post("/v1/charges", charge("auth-1", {{"Authorization", "Bearer alice"}}), kCharge);
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(again.body, alice.body);
    QCOMPARE(rig.upstream.executions("auth-1"), 2);
    // Without credentials a keyed request has no tenant: refused, nothing executed.
    QCOMPARE(c->post("/v1/charges", charge("auth-2"), kCharge).status, 400);
    QCOMPARE(rig.upstream.executions("auth-2"), 0);
    // The store keeps a digest, never the credential.
    auto store = rig.db.connect();
    auto tenants = store.exec("SELECT tenant FROM idem.keys WHERE idem_key = 'auth-1' ORDER BY tenant");
    QCOMPARE(tenants.rows(), 2);
    for (int i = 0; i < 2; ++i) {
      QVERIFY2(tenants.str(i, "tenant").starts_with("cred_"), tenants.str(i, "tenant").c_str());
      QVERIFY(tenants.str(i, "tenant").find("alice") == std::string::npos);
      QVERIFY(tenants.str(i, "tenant").find("bob") == std::string::npos);
    }
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem.events WHERE tenant LIKE '%alice%' OR tenant LIKE '%bob%'")
                 .integer(0, "n"),
             0LL);
  }

  void changingTheTenantSourceUnderLiveKeysIsRefused() {
    test::ProxyRig rig("px_ts_change");  // --single-tenant
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("live-1"), kCharge).status, 201);
    rig.proxy.reset();

    std::string out;
    QCOMPARE(runBounded(proxyArgs(rig, {"--listen", "127.0.0.1:0", "--tenant-header", "X-Tenant-Id"}), &out), 2);
    QVERIFY2(out.find("1 live key was written with tenants from single tenant") != std::string::npos, out.c_str());
    QVERIFY2(out.find("header X-Tenant-Id") != std::string::npos, out.c_str());
    QVERIFY2(out.find("execute again") != std::string::npos, out.c_str());
    QVERIFY2(out.find("--accept-tenant-change") != std::string::npos, out.c_str());

    // Deliberately: it starts, and the recorded policy says where its tenants come from.
    rig.startProxy({"--tenant-header", "X-Tenant-Id", "--accept-tenant-change"});
    auto store = rig.db.connect();
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem.policies WHERE document->>'tenant_header' = 'X-Tenant-Id'")
                 .integer(0, "n"),
             1LL);
    QCOMPARE(
        store.exec("SELECT count(*) AS n FROM idem.policies WHERE document->'single_tenant' = 'true'").integer(0, "n"),
        1LL);
  }

  void aTenantHeaderIsTrustedOnlyFromTheGateway() {
    // The gateway is 192.0.2.1; this test's client (127.0.0.1) is not it.
    test::ProxyRig rig("px_ts_peer", {"--tenant-header", "X-Tenant-Id", "--trusted-peers", "192.0.2.1,10.0.0.0/8"});
    auto c = rig.client();
    const auto forged = c->post("/v1/charges", charge("peer-1", {{"X-Tenant-Id", "acct_a"}}), kCharge);
    QCOMPARE(forged.status, 403);
    QVERIFY2(forged.body.find("untrusted peer") != std::string::npos, forged.body.c_str());
    QCOMPARE(rig.upstream.executions("peer-1", "acct_a"), 0);
    // Forwarded routes too: the upstream never sees the forged header.
    QCOMPARE(c->get("/executions", {{"X-Tenant-Id", "acct_a"}}).status, 403);

    rig.startProxy({"--tenant-header", "X-Tenant-Id", "--trusted-peers", "127.0.0.0/8"});
    auto trusted = rig.client();
    QCOMPARE(trusted->post("/v1/charges", charge("peer-1", {{"X-Tenant-Id", "acct_a"}}), kCharge).status, 201);
    QCOMPARE(rig.upstream.executions("peer-1", "acct_a"), 1);

    // Reachable beyond this machine with a gateway's header and no trusted peers: refused.
    std::string out;
    QCOMPARE(runBounded(proxyArgs(rig, {"--listen", "0.0.0.0:0", "--tenant-header", "X-Tenant-Id"}), &out), 2);
    QVERIFY2(out.find("--trusted-peers") != std::string::npos, out.c_str());
    QCOMPARE(runBounded(proxyArgs(rig, {"--listen", "127.0.0.1:0", "--tenant-header", "X-Tenant-Id", "--trusted-peers",
                                        "300.1.1.1/8"}),
                        &out),
             2);
    QVERIFY2(out.find("is not an address or CIDR range") != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestTenantSource)
#include "tst_tenantsource.moc"
