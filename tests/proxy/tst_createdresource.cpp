// Which id of a service's answer the proxy stores with the key (createdResource): the Location's
// last segment, else a JSON body's top-level "id"; nothing for errors, odd ids or other bodies.
// And that the id reaches the key's row through a real proxy, on both of its write paths.
#include <QtTest>

#include "core/client/client.h"
#include "core/proxy/createdresource.h"
#include "tests/proxy/raw_upstream.h"

using namespace idem;

namespace {
std::string found(int status, http::Headers headers, std::string_view body) {
  return proxy::createdResource(status, headers, body).value_or("(none)");
}

// (ordinary literals: moc cannot parse raw strings)
const char* const kPolicy =
    "{ \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [ { \"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\" } ] }\n";
}  // namespace

class TestCreatedResource : public QObject {
  Q_OBJECT

 private slots:
  void locationFirstThenTheJsonId() {
    QCOMPARE(found(201, {{"Location", "/v1/charges/ch_1"}}, ""), std::string("ch_1"));
    QCOMPARE(found(201, {{"location", "https://api.example/v1/charges/ch_2/?expand=x#y"}}, ""), std::string("ch_2"));
    QCOMPARE(found(201, {{"Location", "/v1/charges/ch_3"}, {"Content-Type", "application/json"}}, R"({"id":"other"})"),
             std::string("ch_3"));
    QCOMPARE(found(200, {{"Content-Type", "application/json; charset=utf-8"}}, R"({"object":"refund","id":"re_9"})"),
             std::string("re_9"));
    QCOMPARE(found(200, {{"Content-Type", "application/problem+json"}}, R"({"id":"x_1"})"), std::string("x_1"));
  }

  void nothingWhenTheAnswerNamesNothingUsable() {
    QCOMPARE(found(402, {{"Location", "/v1/charges/ch_1"}}, ""), std::string("(none)"));  // not a creation
    QCOMPARE(found(500, {{"Content-Type", "application/json"}}, R"({"id":"ch_1"})"), std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "text/plain"}}, R"({"id":"ch_1"})"), std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, R"({"id":42})"), std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, R"({"data":{"id":"nested"}})"), std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, R"(["ch_1"])"), std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, R"({"id":"has space"})"), std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, R"({"id":")" + std::string(129, 'a') + R"("})"),
             std::string("(none)"));
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, "{\"id\":"), std::string("(none)"));  // malformed
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    QCOMPARE(found(201, {{"Content-Type", "application/json"}}, deep), std::string("(none)"));  // never parsed deep
    QCOMPARE(found(201, {{"Location", "/"}}, ""), std::string("(none)"));
    QCOMPARE(found(201, {{"Location", "https://api.example"}}, ""), std::string("(none)"));
    // A Location that names nothing usable falls back to the body.
    QCOMPARE(found(201, {{"Location", "/"}, {"Content-Type", "application/json"}}, R"({"id":"ch_5"})"),
             std::string("ch_5"));
  }

  // raw_upstream.py answers a charge 201 with {"id":"ch_1",...} and no Location: what most JSON
  // APIs do. Support finds the key by that id (explain, the console's search), so the row must
  // carry it whichever way the proxy writes to the store.
  void theJsonIdOfARealAnswerIsStoredWithTheKey_data() {
    QTest::addColumn<QString>("storeWrites");
    QTest::newRow("event loop") << "loop";
    QTest::newRow("handler threads") << "threads";
  }
  void theJsonIdOfARealAnswerIsStoredWithTheKey() {
    QFETCH(QString, storeWrites);
    test::RawUpstreamRig rig("px_resource_" + storeWrites.toStdString(), kPolicy,
                             {"--store-writes", storeWrites.toStdString()});
    client::Client c("127.0.0.1", rig.proxy->port());
    const auto created =
        c.post("/v1/charges", {{"Content-Type", "application/json"}, {"Idempotency-Key", "res-1"}}, R"({"amount":1})");
    QCOMPARE(created.status, 201);
    QVERIFY(created.header("Location").empty());
    QCOMPARE(rig.db.connect()
                 .exec("SELECT coalesce(resource_ref, '(none)') AS r FROM idem.keys WHERE idem_key = 'res-1'")
                 .str(0, "r"),
             std::string("ch_1"));
  }
};

QTEST_GUILESS_MAIN(TestCreatedResource)
#include "tst_createdresource.moc"
