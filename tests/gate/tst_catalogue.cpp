// One problem catalogue (core/http/problemcatalogue.h): every problem a front answers has one
// entry, its `type` is `<docs_url>#<slug>`, and the published policy page has an element with
// that id for each entry, on the main listener and on the admin listener. The `type` names the
// operator's docs_url, where clients can open it; only a policy without one gets the server's
// own page (issue 31, item 4).
#include <QtTest>
#include <set>

#include "tests/endpoint/raw_http.h"
#include "tests/gate/gate_support.h"

using namespace idem;

class TstCatalogue : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::GateServer> m_server;

  static std::string page(int port) {
    const auto r = client::Client("127.0.0.1", port).get("/idempotency", {{"Accept", "text/html"}});
    return r.status == 200 ? r.body : std::string();
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("gate_catalogue");
    m_server = std::make_unique<test::GateServer>(*m_db, gate::Execution::Thread::Loop);
  }
  void cleanupTestCase() {
    m_server.reset();
    m_db.reset();
  }

  void everyEntryIsOneSlug() {
    std::set<std::string_view> slugs;
    for (const auto& p : http::kProblems) {
      QVERIFY2(slugs.insert(p.slug).second, std::string(p.slug).c_str());
      QVERIFY(!p.title.empty());
      QVERIFY(!p.meaning.empty());
      QVERIFY(p.status == 0 || (p.status >= 400 && p.status <= 599));
    }
    QVERIFY(slugs.size() > 30);
  }

  // Walks the catalogue: each type's anchor resolves on the published page, wherever it is served.
  void everyTypeResolvesOnThePublishedPage() {
    for (const int port : {m_server->server->port(), m_server->server->adminPort()}) {
      const std::string html = page(port);
      QVERIFY2(!html.empty(), std::to_string(port).c_str());
      for (const auto& p : http::kProblems) {
        const std::string anchor = "id=\"" + std::string(p.slug) + "\"";
        QVERIFY2(html.find(anchor) != std::string::npos, anchor.c_str());
      }
    }
  }

  // Issue 31 item 4: the proxy used to rewrite the operator's docs_url to its own loopback
  // address in every type; clients behind a gateway got a link they could not open.
  void typesNameTheOperatorsDocsUrl() {
    const auto missing = m_server->post("/v1/charges", test::keyed(""));
    QCOMPARE(missing.status, 400);
    QCOMPARE(test::problemOf(missing)["type"].get<std::string>(), std::string("https://docs.test/idempotency#key-missing"));
    const auto json = client::Client("127.0.0.1", m_server->server->port()).get("/idempotency", {{"Accept", "application/json"}});
    QCOMPARE(nlohmann::json::parse(json.body)["docs_url"].get<std::string>(), std::string("https://docs.test/idempotency"));
    // A type produced by the transport itself links the same page.
    const std::string lowerCase =
        test::exchange(m_server->server->port(), "post /v1/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QCOMPARE(test::statusOf(lowerCase), 400);
    QCOMPARE(nlohmann::json::parse(test::bodyOf(lowerCase))["type"].get<std::string>(),
             std::string("https://docs.test/idempotency#method-case"));
  }

  void withoutADocsUrlTheServersOwnPageStandsIn() {
    endpoint::ServerOptions o;
    o.conninfo = m_db->conninfo();
    o.policy = policy::parsePolicy(test::kGatePolicy, "gate-test-policy.json");
    o.policy.docsUrl.clear();
    o.execution = [](gate::Host&) { return std::make_unique<test::FakeExecution>(gate::Execution::Thread::Loop); };
    endpoint::Server server(std::move(o));
    server.start();
    const auto missing = client::Client("127.0.0.1", server.port()).post("/v1/charges", test::keyed(""), "{}");
    QCOMPARE(missing.status, 400);
    QCOMPARE(test::problemOf(missing)["type"].get<std::string>(), server.url() + "/idempotency#key-missing");
    QVERIFY(page(server.port()).find("id=\"key-missing\"") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TstCatalogue)
#include "tst_catalogue.moc"
