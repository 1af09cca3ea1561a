// Route matching (issue 16, item 6): every spelling a framework may route to the same handler
// matches the policy's route, so a keyed request never slips past enforcement; an encoded '/'
// stays another path.
#include <QtTest>

#include "core/policy/policy.h"

using namespace idem;

namespace {
// Not a raw string: moc reads raw strings as ordinary ones and would lose the test class.
const char* const kPolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"tiers\": ["
    "{\"name\": \"payments\", \"routes\": [\"POST /v1/payments\", \"POST /v1/payments/capture\"], \"ttl\": \"1h\"},"
    "{\"name\": \"root\", \"routes\": [\"POST /\"], \"ttl\": \"1h\"}]}";
}  // namespace

class TestRouteMatch : public QObject {
  Q_OBJECT

 private slots:
  void spellings_data() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QString>("tier");  // empty: no tier
    auto row = [](const char* name, const char* method, QByteArray path, const char* tier) {
      QTest::newRow(name) << QString(method) << path << QString(tier);
    };
    row("exact", "POST", "/v1/payments", "payments");
    row("trailing slash", "POST", "/v1/payments/", "payments");
    row("two trailing slashes", "POST", "/v1/payments//", "payments");
    row("upper case", "POST", "/V1/PAYMENTS", "payments");
    row("mixed case", "POST", "/v1/Payments", "payments");
    row("duplicate slash", "POST", "/v1//payments", "payments");
    row("leading duplicate slash", "POST", "//v1/payments", "payments");
    row("encoded letter", "POST", "/v1/%70ayments", "payments");
    row("encoded letter upper hex", "POST", "/v1/pay%6Dents", "payments");
    row("encoded upper-case letter", "POST", "/v1/%50AYMENTS", "payments");
    row("encoded digit", "POST", "/v%31/payments", "payments");
    row("dot segment", "POST", "/v1/./payments", "payments");
    row("dot-dot segment", "POST", "/v1/x/../payments", "payments");
    row("trailing dot", "POST", "/v1/payments/.", "payments");
    row("dot-dot above root", "POST", "/../v1/payments", "payments");
    row("encoded dot segment", "POST", "/v1/%2e/payments", "payments");
    row("encoded dot-dot segment", "POST", "/v1/x/%2E%2e/payments", "payments");
    row("query string", "POST", "/v1/payments?expand=x", "payments");
    row("fragment", "POST", "/v1/payments#x", "payments");
    row("path parameter", "POST", "/v1/payments;jsessionid=1", "payments");
    row("longer route", "POST", "/v1/payments/capture/", "payments");
    row("root", "POST", "/", "root");
    row("root spelled twice", "POST", "//", "root");
    row("root by dot-dot", "POST", "/v1/..", "root");

    row("encoded slash", "POST", "/v1%2Fpayments", "");
    row("encoded slash lower hex", "POST", "/v1%2fpayments", "");
    row("encoded slash at end", "POST", "/v1/payments%2F", "");
    row("other method", "GET", "/v1/payments", "");
    row("lower-case method", "post", "/v1/payments", "");
    row("prefix", "POST", "/v1/pay", "");
    row("sub-resource", "POST", "/v1/payments/pay_1", "");
    row("dot-dot leaves the route", "POST", "/v1/payments/..", "");
    row("bad escape", "POST", "/v1/%zzayments", "");
    row("truncated escape", "POST", "/v1/payments%", "");
    row("encoded NUL", "POST", "/v1/payments%00", "");
    row("encoded newline", "POST", "/v1/payments%0a", "");
    row("raw space", "POST", "/v1/pay ments", "");
    row("no leading slash", "POST", "v1/payments", "");
    row("absolute form", "POST", "http://x/v1/payments", "");
    row("empty", "POST", "", "");
  }
  void spellings() {
    QFETCH(QString, method);
    QFETCH(QByteArray, path);
    QFETCH(QString, tier);
    const auto p = policy::parsePolicy(kPolicy, "routes.json");
    const policy::Tier* found = p.tierFor(method.toStdString(), path.toStdString());
    QCOMPARE(found ? QString::fromStdString(found->name) : QString(), tier);
  }

  void policyRoutesAreKeptCanonical() {
    const auto p = policy::parsePolicy(
        "{\"docs_url\": \"/i\", \"tiers\": [{\"name\": \"t\", \"routes\": [\"POST /V1//Pay%6dents/\"], "
        "\"ttl\": \"1h\"}]}",
        "c.json");
    QCOMPARE(p.tiers[0].routes, std::vector<std::string>{"POST /v1/payments"});
    const auto m = p.match("POST", "/v1/payments");
    QCOMPARE(std::string(m.route), std::string("POST /v1/payments"));  // the key scope's endpoint
    // Two spellings of one route in two tiers are one route listed twice.
    QVERIFY_THROWS_EXCEPTION(policy::PolicyError,
                             (void)policy::parsePolicy("{\"docs_url\": \"/i\", \"tiers\": ["
                                                       "{\"name\": \"a\", \"routes\": [\"POST /v1/x\"], \"ttl\": \"1h\"},"
                                                       "{\"name\": \"b\", \"routes\": [\"POST /V1/x/\"], \"ttl\": \"1h\"}]}",
                                                       "d.json"));
    QVERIFY_THROWS_EXCEPTION(policy::PolicyError,
                             (void)policy::parsePolicy("{\"docs_url\": \"/i\", \"tiers\": [{\"name\": \"a\", "
                                                       "\"routes\": [\"POST /v1/%zz\"], \"ttl\": \"1h\"}]}",
                                                       "e.json"));
  }

  void missingTenantIsAnExplicitChoice() {
    const std::string tiers = ", \"tiers\": [{\"name\": \"a\", \"routes\": [\"POST /x\"], \"ttl\": \"1h\"}]}";
    QVERIFY(policy::parsePolicy("{\"docs_url\": \"/i\", \"tenant_header\": \"Account-Id\"" + tiers, "a").tenantRequired);
    QVERIFY(!policy::parsePolicy("{\"docs_url\": \"/i\"" + tiers, "b").tenantRequired);
    const auto named = policy::parsePolicy(
        "{\"docs_url\": \"/i\", \"tenant_header\": \"Account-Id\", \"tenant_required\": false, "
        "\"default_tenant\": \"acct_shared\"" + tiers, "c");
    QVERIFY(!named.tenantRequired);
    QCOMPARE(named.defaultTenant, std::string("acct_shared"));
    // A default tenant that can never apply is a mistake in the file.
    QVERIFY_THROWS_EXCEPTION(policy::PolicyError,
                             (void)policy::parsePolicy("{\"docs_url\": \"/i\", \"tenant_header\": \"Account-Id\", "
                                                       "\"default_tenant\": \"x\"" + tiers, "d"));
  }
};

QTEST_GUILESS_MAIN(TestRouteMatch)
#include "tst_routematch.moc"
