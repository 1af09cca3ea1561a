// One hostile request against a real `idemctl serve` process over a raw loopback socket: each
// gets a clear 4xx (never a crash, never a 500, never a body past the limit reaching the
// handler), and the process is still alive and answering /healthz afterwards.
#include <QtTest>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/raw_http.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;
using test::bodyOf;
using test::exchange;
using test::statusOf;

namespace {
constexpr int kMaxBody = 64 * 1024;

std::string post(const std::string& framingHeaders, const std::string& body,
                 const std::string& path = "/v1/payments", const std::string& key = "hostile-1") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccount-Id: acct_1\r\n" +
         "Idempotency-Key: " + key + "\r\n" + framingHeaders + "Connection: close\r\n\r\n" + body;
}

std::string chunked(const std::string& body, std::size_t chunk) {
  std::string out;
  char size[32];
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    const std::string part = body.substr(at, chunk);
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    out += size + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}

// A gzip stream of `bytes` zero bytes (a few KiB that inflate far past the body limit).
std::string gzipOfZeros(std::size_t bytes) {
  const std::string cmd = "head -c " + std::to_string(bytes) + " /dev/zero | gzip -c";
  std::FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  std::size_t n;
  while (p && (n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (p) pclose(p);
  return out;
}
}  // namespace

class TestHostile : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::ServeProcess> m_serve;

  int port() const { return m_serve->port(); }

  // After every hostile request: the process lives and a fresh connection gets /healthz.
  void assertStillServing() {
    QVERIFY2(m_serve->alive(), "idemctl serve died");
    const std::string r = exchange(port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QCOMPARE(statusOf(r), 200);
  }
  // A 4xx answered as problem+json whose body is valid JSON.
  void assertProblem(const std::string& response, int status) {
    QVERIFY2(m_serve->alive(), "idemctl serve died");
    QVERIFY2(statusOf(response) == status, ("expected " + std::to_string(status) + ", got: " + response.substr(0, 600)).c_str());
    QVERIFY2(response.find("application/problem+json") != std::string::npos, response.substr(0, 600).c_str());
    QVERIFY2(!nlohmann::json::parse(bodyOf(response), nullptr, false).is_discarded(), response.c_str());
    // Refusals of the HTTP layer too carry the id an operator finds in the log.
    QVERIFY2(response.find("\r\nRequest-Id: req_") != std::string::npos, response.substr(0, 600).c_str());
  }
  long long keyRows(const std::string& key) {
    auto c = m_db->connect();
    return c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = $1", {key}).integer(0, "n");
  }

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("ep_hostile"); }
  // A fresh process when the previous case killed it, so each case's failure is its own.
  void init() {
    if (m_serve && m_serve->alive()) return;
    m_serve = std::make_unique<test::ServeProcess>(
        std::vector<std::string>{"--db", m_db->conninfo(), "--max-body", std::to_string(kMaxBody)});
  }
  void cleanupTestCase() {
    m_serve.reset();
    m_db.reset();
  }

  // Item 7: invalid bytes in the target must never reach a JSON dump that throws.
  void badTargets_data() {
    QTest::addColumn<QString>("request");
    QTest::addColumn<int>("status");
    QTest::newRow("OPTIONS /%ff") << "OPTIONS /%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" << 404;
    QTest::newRow("GET /%ff%0a") << "GET /%ff%0a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" << 400;
    QTest::newRow("GET /%ff") << "GET /%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" << 404;
    QTest::newRow("GET /%zz") << "GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" << 400;
    QTest::newRow("GET /%f") << "GET /%f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" << 400;
    QTest::newRow("GET /%00") << "GET /v1/payments%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" << 400;
    QTest::newRow("bad query escape") << "GET /v1/payments?limit=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                      << 400;
    QTest::newRow("bad Range, bad path") << "GET /%ff HTTP/1.1\r\nHost: x\r\nRange: bytes=abc\r\nConnection: close\r\n\r\n"
                                         << 404;
    QTest::newRow("OPTIONS bad Range") << "OPTIONS /%ff HTTP/1.1\r\nHost: x\r\nRange: bytes=9-1,x\r\nConnection: close\r\n\r\n"
                                       << 404;
  }
  void badTargets() {
    QFETCH(QString, request);
    QFETCH(int, status);
    assertProblem(exchange(port(), request.toStdString()), status);
    assertStillServing();
  }

  // A Range header means nothing to the endpoint: ignored, the full answer.
  void rangeIgnored() {
    const std::string r = exchange(port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nRange: bytes=5-1\r\nConnection: close\r\n\r\n");
    QCOMPARE(statusOf(r), 200);
    assertStillServing();
  }

  // Item 9: the body limit holds for chunked framing too, with nothing stored.
  void chunkedOverLimitIs413() {
    const std::string pad = "{\"pad\":\"" + std::string(4 * kMaxBody, 'a') + "\"}";
    assertProblem(exchange(port(), post("Transfer-Encoding: chunked\r\n", chunked(pad, 4096), "/v1/payments", "chunk-big")),
                  413);
    QCOMPARE(keyRows("chunk-big"), 0LL);
    assertStillServing();
  }
  void chunkedUnderLimitIsServed() {
    const std::string r = exchange(port(), post("Transfer-Encoding: chunked\r\n", chunked(test::kPayment, 7), "/v1/payments",
                                                "chunk-small"));
    QCOMPARE(statusOf(r), 201);
    QCOMPARE(keyRows("chunk-small"), 1LL);
  }
  // A Content-Length over the limit is refused before its body is read.
  void contentLengthOverLimitIs413() {
    test::RawConnection c(port());
    c.send(post("Content-Length: 1000000000\r\n", ""));
    assertProblem(c.response(std::chrono::seconds(5)), 413);
    assertStillServing();
  }

  // A client that waits for 100 Continue gets it before sending the body; a body that would be
  // over the limit gets 413 instead, so it is never sent.
  void expectContinue() {
    test::RawConnection c(port());
    c.send(post("Expect: 100-continue\r\nContent-Length: " + std::to_string(test::kPayment.size()) + "\r\n", "",
                "/v1/payments", "expect-1"));
    const std::string interim = c.response(std::chrono::seconds(5));
    QVERIFY2(interim.rfind("HTTP/1.1 100 Continue", 0) == 0, interim.c_str());
    c.send(test::kPayment);
    QCOMPARE(statusOf(c.response()), 201);
    test::RawConnection big(port());
    big.send(post("Expect: 100-continue\r\nContent-Length: " + std::to_string(kMaxBody + 1) + "\r\n", "",
                  "/v1/payments", "expect-2"));
    assertProblem(big.response(std::chrono::seconds(5)), 413);
    QCOMPARE(keyRows("expect-2"), 0LL);
    assertStillServing();
  }

  // Item 9: a compressed body could inflate past any limit; the endpoint refuses encodings.
  void contentEncodingIs415_data() {
    QTest::addColumn<QString>("encoding");
    QTest::newRow("gzip") << "gzip";
    QTest::newRow("deflate") << "deflate";
    QTest::newRow("br") << "br";
    QTest::newRow("gzip, identity") << "gzip, identity";
  }
  void contentEncodingIs415() {
    QFETCH(QString, encoding);
    const std::string bomb = gzipOfZeros(8 * 1024 * 1024);
    QVERIFY(bomb.size() > 100 && bomb.size() < static_cast<std::size_t>(kMaxBody));
    const std::string key = "enc-" + encoding.toStdString().substr(0, 4);
    const std::string r = exchange(
        port(), post("Content-Encoding: " + encoding.toStdString() + "\r\nContent-Length: " + std::to_string(bomb.size()) +
                         "\r\n",
                     bomb, "/v1/payments", key));
    assertProblem(r, 415);
    QCOMPARE(keyRows(key), 0LL);
    assertStillServing();
  }

  // Item 11: ambiguous framing (request smuggling through a proxy in front) is refused.
  void ambiguousFramingIs400_data() {
    QTest::addColumn<QString>("framing");
    QTest::addColumn<QString>("body");
    QTest::newRow("two different Content-Lengths")
        << QString("Content-Length: %1\r\nContent-Length: 5\r\n").arg(std::strlen(test::kPayment.c_str()))
        << QString::fromStdString(test::kPayment);
    QTest::newRow("Content-Length and chunked")
        << QString("Content-Length: %1\r\nTransfer-Encoding: chunked\r\n").arg(chunked(test::kPayment, 8).size())
        << QString::fromStdString(chunked(test::kPayment, 8));
    QTest::newRow("chunked and Content-Length")
        << QString("Transfer-Encoding: chunked\r\nContent-Length: %1\r\n").arg(chunked(test::kPayment, 8).size())
        << QString::fromStdString(chunked(test::kPayment, 8));
    QTest::newRow("unknown transfer coding") << "Transfer-Encoding: gzip, chunked\r\n"
                                             << QString::fromStdString(chunked(test::kPayment, 8));
  }
  void ambiguousFramingIs400() {
    QFETCH(QString, framing);
    QFETCH(QString, body);
    const std::string key = "framing-" + std::to_string(QTest::currentDataTag()[0]);
    const std::string r = exchange(port(), post(framing.toStdString(), body.toStdString(), "/v1/payments", key));
    QVERIFY2(statusOf(r) == 400 || statusOf(r) == 501, r.substr(0, 400).c_str());
    QVERIFY2(m_serve->alive(), "idemctl serve died");
    QCOMPARE(keyRows(key), 0LL);
    assertStillServing();
  }

  // Item 11: the header block is bounded in count and bytes, checked as it arrives.
  void tooManyHeadersIs431() {
    std::string many;
    for (int i = 0; i < 500; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    assertProblem(exchange(port(), post(many + "Content-Length: 2\r\n", "{}", "/v1/payments", "many-headers")), 431);
    QCOMPARE(keyRows("many-headers"), 0LL);
    assertStillServing();
  }
  void headerTooLongIs431() {
    const std::string big(64 * 1024, 'x');
    assertProblem(exchange(port(), post("X-Big: " + big + "\r\nContent-Length: 2\r\n", "{}", "/v1/payments", "long-header")),
                  431);
    assertStillServing();
  }
  // A header line that never ends is cut at the byte limit, not buffered until it does.
  void endlessHeaderLineIsCut() {
    test::RawConnection c(port());
    c.send("GET /healthz HTTP/1.1\r\nX-Endless: ");
    const std::string chunk(64 * 1024, 'y');
    bool refused = false;
    for (int i = 0; i < 256 && !refused; ++i) refused = !c.send(chunk);  // up to 16 MiB
    QVERIFY2(refused || statusOf(c.response(std::chrono::seconds(2))) == 431,
             "the server kept reading a 16 MiB header line");
    assertStillServing();
  }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "tst_hostile.moc"
