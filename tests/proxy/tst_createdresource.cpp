// Which id of a service's answer the proxy stores with the key (createdResource): the Location's
// last segment, else a JSON body's top-level "id"; nothing for errors, odd ids or other bodies.
#include <QtTest>

#include "core/proxy/createdresource.h"

using namespace idem;

namespace {
std::string found(int status, http::Headers headers, std::string_view body) {
  return proxy::createdResource(status, headers, body).value_or("(none)");
}
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
};

QTEST_GUILESS_MAIN(TestCreatedResource)
#include "tst_createdresource.moc"
