// Routes with ids in their paths through a real `idemctl proxy` (issue 31, item 1): a keyed
// POST /v1/orders/123/capture is enforced and forwarded once, its retry is replayed, and the same
// key on /v1/orders/124/capture is refused with 422 (reuse for a different request) without
// reaching the service. The published policy shows the template as written.
#include <QtTest>
#include <nlohmann/json.hpp>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using nlohmann::json;
using test::charge;

namespace {
// Not a raw string: moc reads raw strings as ordinary ones and would lose the test class.
const char* const kPolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"tiers\": ["
    "{\"name\": \"captures\", \"routes\": [\"POST /v1/orders/{orderId}/capture\"], \"ttl\": \"1h\"},"
    "{\"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\"}]}";
}  // namespace

class TestRouteTemplates : public QObject {
  Q_OBJECT

 private slots:
  void aTemplateRouteIsEnforcedAndForwarded() {
    test::ProxyRig rig("px_templates", {}, kPolicy);
    auto c = rig.client();

    const auto first = c->post("/v1/orders/123/capture", charge("cap-1"), "{}");
    QCOMPARE(first.status, 201);
    QCOMPARE(json::parse(first.body).at("order").get<std::string>(), std::string("123"));
    QCOMPARE(rig.upstream.executions("cap-1"), 1);

    const auto replay = c->post("/v1/orders/123/capture", charge("cap-1"), "{}");
    QCOMPARE(replay.status, 201);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, first.body);
    QCOMPARE(rig.upstream.executions("cap-1"), 1);

    const auto other = c->post("/v1/orders/124/capture", charge("cap-1"), "{}");
    QCOMPARE(other.status, 422);
    QVERIFY2(json::parse(other.body).at("type").get<std::string>().ends_with("#payload-mismatch"), other.body.c_str());
    QCOMPARE(rig.upstream.executions("cap-1"), 1);  // never forwarded

    // Its own key on the other order is its own operation.
    const auto second = c->post("/v1/orders/124/capture", charge("cap-2"), "{}");
    QCOMPARE(second.status, 201);
    QCOMPARE(json::parse(second.body).at("order").get<std::string>(), std::string("124"));
    QCOMPARE(rig.upstream.executions("cap-2"), 1);

    // An exact route beside it is enforced as before.
    QCOMPARE(c->post("/v1/charges", charge("ch-1"), test::kCharge).status, 201);
    const auto chargeReplay = c->post("/v1/charges", charge("ch-1"), test::kCharge);
    QCOMPARE(chargeReplay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("ch-1"), 1);

    // The published policy names the template, not an order.
    const auto published = c->get("/idempotency", {{"Accept", "application/json"}});
    QCOMPARE(published.status, 200);
    QCOMPARE(json::parse(published.body).at("tiers").at(0).at("routes").at(0).get<std::string>(),
             std::string("POST /v1/orders/{orderId}/capture"));
  }

  void aPolicyWithSeveralProblemsIsRefusedWithAllOfThem() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"docs_url\": \"/d\", \"tiers\": [\n"
               "  {\"name\": \"a\", \"ttl\": \"1h\", \"routes\": [\"POST /v1/orders/{id/capture\"]},\n"
               "  {\"name\": \"b\", \"ttl\": \"1x\", \"routes\": [\"PUT /v1/files/{p*}/meta\"]}]}\n");
    file.close();
    std::string out;
    const int status = test::runIdemctl({"proxy", "--policy", path.toStdString(), "--upstream", "http://127.0.0.1:9",
                                         "--db", "dbname=unused"},
                                        &out);
    QVERIFY2(status != 0, out.c_str());
    for (const char* said : {"bad.json: line 2, column 41: tiers[0].routes[0]", "bad.json: line 3, column 24: tiers[1].ttl",
                             "bad.json: line 3, column 41: tiers[1].routes[0]"})
      QVERIFY2(out.find(said) != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestRouteTemplates)
#include "tst_routetemplates.moc"
