// A tier's `on_takeover` (docs/policy.md): what a retry does once it took over the key of a
// holder that stopped. Read from the file with its errors placed; left to the front when absent;
// published resolved, as JSON and on the HTML page, so a client reads what this front does.
#include <QtTest>

#include "core/policy/policy.h"
#include "tests/unit/policytext.h"

using namespace idem;
using namespace idem::policy;
using nlohmann::json;
using test::q;

namespace {

std::string policyWith(const std::string& fields) {
  return q("{\n  'docs_url': '/a',\n  'tiers': [\n    { 'name': 'a', 'routes': ['POST /a'], 'ttl': '1h'" + fields +
           " },\n    { 'name': 'b', 'routes': ['POST /b'], 'ttl': '1h' }\n  ]\n}\n");
}

QString errorOf(const std::string& text) { return test::policyErrorOf(text, "p.json"); }
}  // namespace

class TestPolicyTakeover : public QObject {
  Q_OBJECT

 private slots:
  void readFromTheTierOrLeftToTheFront() {
    QCOMPARE(parsePolicy(policyWith(""), "p.json").tiers.at(0).onTakeover, OnTakeover::FrontDecides);
    QCOMPARE(parsePolicy(policyWith(", 'on_takeover': 'execute'"), "p.json").tiers.at(0).onTakeover,
             OnTakeover::Execute);
    QCOMPARE(parsePolicy(policyWith(", 'on_takeover': 'outcome_unknown'"), "p.json").tiers.at(0).onTakeover,
             OnTakeover::OutcomeUnknown);
  }

  void aBadValueIsPlacedAndExplained() {
    const QString error = errorOf(policyWith(", 'on_takeover': 'retry'"));
    QVERIFY2(error.startsWith("p.json: line 4, column 71: tiers[0].on_takeover: \"retry\" is not valid"),
             qPrintable(error));
    QVERIFY(error.contains("\"outcome_unknown\""));
    QVERIFY(errorOf(policyWith(", 'on_takeover': true")).contains("tiers[0].on_takeover"));
  }

  void publishedAsThisFrontResolvesIt() {
    const Policy p = parsePolicy(policyWith(", 'on_takeover': 'execute'"), "p.json");
    // Tier a names it; tier b takes the front's rule: serve's, then the proxy's.
    const json serve = publishedJson(p);
    QCOMPARE(serve["tiers"][0].value("on_takeover", ""), std::string("execute"));
    QCOMPARE(serve["tiers"][1].value("on_takeover", ""), std::string("execute"));
    const json proxy = publishedJson(p, OnTakeover::OutcomeUnknown);
    QCOMPARE(proxy["tiers"][0].value("on_takeover", ""), std::string("execute"));
    QCOMPARE(proxy["tiers"][1].value("on_takeover", ""), std::string("outcome_unknown"));

    const std::string servePage = publishedHtml(p);
    QVERIFY(servePage.find("upstream-outcome-unknown</code>, stored for the key") == std::string::npos);
    QVERIFY(servePage.find("a retry with the same key runs the request again") != std::string::npos);
    const std::string proxyPage = publishedHtml(p, {}, OnTakeover::OutcomeUnknown);
    // One tier runs a taken-over request again, the other answers that its outcome is unknown.
    QVERIFY(proxyPage.find("a retry with the same key runs the request again") != std::string::npos);
    QVERIFY(proxyPage.find("<code>upstream-outcome-unknown</code>, stored for the key") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestPolicyTakeover)
#include "tst_policytakeover.moc"
