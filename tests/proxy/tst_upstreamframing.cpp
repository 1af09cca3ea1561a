// What the proxy does with an upstream exchange whose framing it cannot trust, against Python's
// http.server (tests/proxy/raw_upstream.py): a GET's body that the upstream ignores never becomes
// a request of its own on a pooled connection (smuggling); a close-delimited answer cut short is
// not stored as its status; a HEAD answer keeps its Content-Length; refusals before any work
// (401, 429) release the key instead of being replayed for the TTL.
#include <QtTest>

#include "core/client/client.h"
#include "tests/proxy/raw_upstream.h"

using namespace idem;

namespace {
// (ordinary literals: moc cannot parse raw strings)
const char* const kPolicy =
    "{\n"
    "  \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [\n"
    "    { \"name\": \"charges\", \"routes\": [\"POST /v1/charges\", \"POST /v1/cut\", \"POST /v1/auth\", \"POST /v1/limited\"],\n"
    "      \"ttl\": \"1h\", \"lease\": \"5s\" }\n"
    "  ]\n"
    "}\n";

http::Headers keyed(const std::string& key) {
  return {{"Content-Type", "application/json"}, {"Idempotency-Key", key}};
}

long long storedKeys(const test::RawUpstreamRig& rig, const std::string& key) {
  return rig.db.connect()
      .exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = $1 AND state = 'done'", {key})
      .integer(0, "n");
}
}  // namespace

class TestUpstreamFraming : public QObject {
  Q_OBJECT

 private slots:
  void aGetBodyNeverBecomesARequestOfItsOwn() {
    test::RawUpstreamRig rig("px_smuggle", kPolicy);
    const std::string smuggled =
        "POST /v1/charges HTTP/1.1\r\nHost: up\r\nContent-Type: application/json\r\nIdempotency-Key: smug-1\r\n"
        "Content-Length: 2\r\n\r\n{}";
    const std::string get = "GET /peek HTTP/1.1\r\nHost: up\r\nConnection: close\r\nContent-Length: " +
                            std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled;
    const std::string first = test::rawExchange(rig.proxy->port(), get);
    QVERIFY2(first.rfind("HTTP/1.1 200", 0) == 0, first.c_str());
    // The next clients get their own answers, never the smuggled request's.
    client::Client c("127.0.0.1", rig.proxy->port());
    for (int i = 0; i < 5; ++i) {
      const auto next = c.get("/peek");
      QCOMPARE(next.status, 200);
      QCOMPARE(next.body, std::string(R"({"peek":true})"));
    }
    QThread::msleep(300);
    QCOMPARE(rig.executions("smug-1"), 0);  // nothing executed outside Idem
  }

  void aCloseDelimitedAnswerCutShortIsNotStoredAsItsStatus() {
    test::RawUpstreamRig rig("px_cut", kPolicy);
    client::Client c("127.0.0.1", rig.proxy->port());
    const auto first = c.post("/v1/cut", keyed("cut-1"), "{}");
    QVERIFY2(first.status != 201, first.body.c_str());
    QVERIFY(first.body.find("outcome-unknown") != std::string::npos);
    const auto again = c.post("/v1/cut", keyed("cut-1"), "{}");
    QCOMPARE(again.status, first.status);  // the stored "outcome unknown", never a 201
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.executions("cut-1"), 1);
  }

  void headKeepsTheUpstreamsContentLength() {
    test::RawUpstreamRig rig("px_head", kPolicy);
    const std::string answer =
        test::rawExchange(rig.proxy->port(), "HEAD /doc HTTP/1.1\r\nHost: up\r\nConnection: close\r\n\r\n");
    QVERIFY2(answer.rfind("HTTP/1.1 200", 0) == 0, answer.c_str());
    QVERIFY2(answer.find("Content-Length: 1234\r\n") != std::string::npos, answer.c_str());
    QVERIFY2(answer.find("\r\n\r\n") == answer.size() - 4, answer.c_str());  // and no body
  }

  void refusalsBeforeAnyWorkReleaseTheKey() {
    test::RawUpstreamRig rig("px_refusals", kPolicy);
    client::Client c("127.0.0.1", rig.proxy->port());
    for (const auto& [path, status] : {std::pair<std::string, int>{"/v1/auth", 401}, {"/v1/limited", 429}}) {
      const std::string key = "refusal" + path.substr(3);
      for (int i = 0; i < 2; ++i) {
        const auto r = c.post(path, keyed(key), "{}");
        QCOMPARE(r.status, status);
        QVERIFY(r.header("Idempotent-Replayed").empty());  // passed through each time, never replayed
        QCOMPARE(r.header("Idempotency-Key"), "\"" + key + "\"");
      }
      if (status == 429) QCOMPARE(c.post(path, keyed(key), "{}").header("Retry-After"), std::string("1"));
      QCOMPARE(storedKeys(rig, key), 0LL);
    }
  }
};

QTEST_GUILESS_MAIN(TestUpstreamFraming)
#include "tst_upstreamframing.moc"
