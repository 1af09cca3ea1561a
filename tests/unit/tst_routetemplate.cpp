// Routes with parameters (issue 31, item 1): "{id}" and a trailing "{path*}" choose the tier by
// template, the most specific route wins, anything the syntax does not understand is refused at
// load with its line and column, and every problem of a file is reported in one run.
#include <QtTest>

#include "core/policy/policy.h"
#include "tests/unit/policytext.h"

using namespace idem;
using namespace Qt::StringLiterals;

namespace {
// One route per line, so a problem's line says which route it is.
std::string policyWithRoutes(const std::vector<std::string>& tierRoutes) {
  std::string text = "{\n\"docs_url\": \"/i\",\n\"tiers\": [\n";
  for (std::size_t i = 0; i < tierRoutes.size(); ++i)
    text += std::string(i ? "," : "") + "{\"name\": \"t" + std::to_string(i) + "\", \"ttl\": \"1h\", \"routes\": [\n  \"" +
            tierRoutes[i] + "\"]}\n";
  return text + "]}\n";
}

QString errorOf(const std::string& text) { return test::policyErrorOf(text, "routes.json"); }

// Not a raw string: moc reads raw strings as ordinary ones and would lose the test class.
const char* const kTemplates =
    "{\"docs_url\": \"/i\", \"tiers\": ["
    "{\"name\": \"special\", \"routes\": [\"POST /v1/orders/special/capture\"], \"ttl\": \"1h\"},"
    "{\"name\": \"generic\", \"routes\": [\"POST /v1/orders/{id}/{action}\"], \"ttl\": \"1h\"},"
    "{\"name\": \"capture\", \"routes\": [\"POST /v1/Orders/{orderId}/capture\"], \"ttl\": \"1h\"},"
    "{\"name\": \"files\", \"routes\": [\"PUT /v1/files/{path*}\"], \"ttl\": \"1h\"},"
    "{\"name\": \"readme\", \"routes\": [\"PUT /v1/files/{dir}/readme\"], \"ttl\": \"1h\"}]}";
}  // namespace

class TestRouteTemplate : public QObject {
  Q_OBJECT

 private slots:
  void mostSpecificTemplateWins_data() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("tier");   // empty: no tier
    QTest::addColumn<QString>("route");  // the key scope's endpoint
    auto row = [](const char* name, const char* method, const char* path, const char* tier, const char* route) {
      QTest::newRow(name) << QString(method) << QString(path) << QString(tier) << QString(route);
    };
    row("parameter", "POST", "/v1/orders/123/capture", "capture", "POST /v1/orders/{orderId}/capture");
    row("another id, same route", "POST", "/v1/orders/124/capture", "capture", "POST /v1/orders/{orderId}/capture");
    row("any spelling", "POST", "/V1//orders/123/CAPTURE/", "capture", "POST /v1/orders/{orderId}/capture");
    row("encoded slash stays in the id", "POST", "/v1/orders/a%2Fb/capture", "capture",
        "POST /v1/orders/{orderId}/capture");
    row("literal beats parameter", "POST", "/v1/orders/special/capture", "special", "POST /v1/orders/special/capture");
    row("one literal more wins", "POST", "/v1/orders/123/refund", "generic", "POST /v1/orders/{id}/{action}");
    row("wildcard, one segment", "PUT", "/v1/files/a.txt", "files", "PUT /v1/files/{path*}");
    row("wildcard, many segments", "PUT", "/v1/files/a/b/c.txt", "files", "PUT /v1/files/{path*}");
    row("parameter beats wildcard", "PUT", "/v1/files/docs/readme", "readme", "PUT /v1/files/{dir}/readme");
    row("wildcard takes at least one", "PUT", "/v1/files", "", "");
    row("too short", "POST", "/v1/orders/123", "", "");
    row("too long", "POST", "/v1/orders/123/capture/x", "", "");
    row("other method", "GET", "/v1/orders/123/capture", "", "");
  }
  void mostSpecificTemplateWins() {
    QFETCH(QString, method);
    QFETCH(QString, path);
    QFETCH(QString, tier);
    QFETCH(QString, route);
    const auto p = policy::parsePolicy(kTemplates, "t.json");
    const auto m = p.match(method.toStdString(), path.toStdString());
    QCOMPARE(m.tier ? QString::fromStdString(m.tier->name) : QString(), tier);
    QCOMPARE(QString::fromStdString(std::string(m.route)), route);
    if (m.tier) QCOMPARE(m.templated, route.contains(u'{'));
  }

  void theRequestIsKeptForTheFingerprint() {
    const auto p = policy::parsePolicy(kTemplates, "t.json");
    const auto templated = p.match("POST", "/v1/orders/123/capture?x=1");
    QCOMPARE(templated.request, std::string("POST /v1/orders/123/capture"));
    QVERIFY(templated.templated);
    const auto exact = p.match("POST", "/v1/orders/Special/capture");
    QCOMPARE(exact.request, std::string("POST /v1/orders/special/capture"));
    QVERIFY(!exact.templated);
  }

  void exactRoutesAreUnchanged() {
    const auto p = policy::parsePolicy(
        "{\"docs_url\": \"/i\", \"tiers\": [{\"name\": \"t\", \"routes\": [\"POST /V1//Pay%6dents/\", \"POST /a/*x\"], "
        "\"ttl\": \"1h\"}]}",
        "c.json");
    QCOMPARE(p.tiers[0].routes, (std::vector<std::string>{"POST /v1/payments", "POST /a/*x"}));
    QVERIFY(!p.match("POST", "/v1/payments").templated);
    QVERIFY(p.match("POST", "/v1/payments/1").tier == nullptr);
  }

  void templatesArePublishedAsTemplates() {
    const auto p = policy::parsePolicy(kTemplates, "t.json");
    const auto json = policy::publishedJson(p);
    QCOMPARE(json.at("tiers").at(2).at("routes").at(0).get<std::string>(),
             std::string("POST /v1/orders/{orderId}/capture"));
    const QString html = QString::fromStdString(policy::publishedHtml(p));
    QVERIFY2(html.contains(u"<code>POST /v1/orders/{orderId}/capture</code>"_s), qPrintable(html));
    QVERIFY2(html.contains(u"refused with <b>422</b>, not processed as a second operation"_s), qPrintable(html));
    const QString plain = QString::fromStdString(policy::publishedHtml(policy::parsePolicy(
        "{\"docs_url\": \"/i\", \"tiers\": [{\"name\": \"t\", \"routes\": [\"POST /a\"], \"ttl\": \"1h\"}]}", "p")));
    QVERIFY(!plain.contains(u"{name}"_s));
  }

  void notUnderstoodIsRefusedWithLineAndColumn_data() {
    QTest::addColumn<QString>("route");
    QTest::addColumn<QString>("message");
    QTest::newRow("unbalanced") << "POST /v1/orders/{id/capture" << "are unbalanced";
    QTest::newRow("unbalanced close") << "POST /v1/orders/{id}}" << "are unbalanced";
    QTest::newRow("stray close") << "POST /v1/orders/id}" << "are unbalanced";
    QTest::newRow("empty name") << "POST /v1/orders/{}/capture" << "a parameter needs a name";
    QTest::newRow("empty wildcard name") << "PUT /v1/files/{*}" << "a parameter needs a name";
    QTest::newRow("inside a segment") << "POST /v1/orders/ord_{id}" << "must be a whole segment";
    QTest::newRow("two in a segment") << "POST /v1/{a}{b}" << "must be a whole segment";
    QTest::newRow("bad name") << "POST /v1/{1d}" << "is not a parameter name";
    QTest::newRow("name with a dash") << "POST /v1/{order-id}" << "is not a parameter name";
    QTest::newRow("wildcard not last") << "PUT /v1/files/{path*}/meta" << "must be the last segment";
    QTest::newRow("bare star") << "PUT /v1/files/*" << "is not a wildcard here";
    QTest::newRow("double star") << "PUT /v1/files/**" << "is not a wildcard here";
    QTest::newRow("named twice") << "POST /v1/{id}/x/{id}" << "is named twice";
    QTest::newRow("dot-dot") << "POST /v1/{id}/../x" << "may not contain \".\" or \"..\"";
    QTest::newRow("bad escape") << "POST /v1/{id}/%zz" << "malformed %-escape";
  }
  void notUnderstoodIsRefusedWithLineAndColumn() {
    QFETCH(QString, route);
    QFETCH(QString, message);
    // The route is the second tier's, on line 7, after two spaces.
    const QString error = errorOf(policyWithRoutes({"POST /ok", route.toStdString()}));
    QVERIFY2(error.startsWith(u"routes.json: line 7, column 3: tiers[1].routes[0]: "_s), qPrintable(error));
    QVERIFY2(error.contains(message), qPrintable(error));
    QVERIFY2(!error.contains(u'\n'), qPrintable(error));
  }

  void sameRequestsTwiceIsRefused() {
    const QString across = errorOf(policyWithRoutes({"POST /o/{id}", "POST /o/{order}"}));
    QVERIFY2(across.startsWith(u"routes.json: line 7, column 3: tiers[1].routes[0]: \"POST /o/{order}\" matches the "
                               "same requests as \"POST /o/{id}\" at tiers[0].routes[0]"_s),
             qPrintable(across));
    const QString wildcards = errorOf(policyWithRoutes({"PUT /f/{a*}", "PUT /f/{b*}"}));
    QVERIFY2(wildcards.contains(u"matches the same requests as"_s), qPrintable(wildcards));
    // Other methods, a literal, or another shape are other routes.
    for (const auto& other : {"GET /o/{order}", "POST /o/new", "POST /o/{id}/x", "POST /o/{rest*}"})
      QVERIFY2(errorOf(policyWithRoutes({"POST /o/{id}", other})).isEmpty(), other);
  }

  void everyProblemIsReportedAtOnce() {
    const std::string text =
        "{\n"                                                            // 1
        "  \"docs_url\": \"ftp://x\",\n"                                 // 2
        "  \"tiers\": [\n"                                               // 3
        "    {\"name\": \"a\", \"ttl\": \"24x\",\n"                      // 4
        "     \"routes\": [\"POST /v1/orders/{id\", \"POST /ok\"]},\n"   // 5
        "    {\"name\": \"a\", \"ttl\": \"1h\", \"colour\": 1,\n"        // 6
        "     \"routes\": [\"PUT /v1/files/{p*}/x\", \"POST /ok\"]}\n"   // 7
        "  ]\n"
        "}\n";
    try {
      (void)policy::parsePolicy(text, "many.json");
      QFAIL("accepted");
    } catch (const policy::PolicyError& e) {
      const QStringList lines = QString::fromStdString(e.what()).split(u'\n');
      const QStringList expected = {
          u"many.json: line 2, column 15: docs_url: \"ftp://x\" is not a link"_s,
          u"many.json: line 4, column 26: tiers[0].ttl: \"24x\" is not a duration"_s,
          u"many.json: line 5, column 17: tiers[0].routes[0]: \"POST /v1/orders/{id\": the braces"_s,
          u"many.json: line 6, column 14: tiers[1].name: \"a\" is already the name of tiers[0]"_s,
          u"many.json: line 6, column 42: tiers[1].colour: unknown field"_s,
          u"many.json: line 7, column 17: tiers[1].routes[0]: \"PUT /v1/files/{p*}/x\": the wildcard {p*} must be"_s,
          u"many.json: line 7, column 41: tiers[1].routes[1]: \"POST /ok\" is already listed at tiers[0].routes[1]"_s,
      };
      QCOMPARE(lines.size(), expected.size());
      for (qsizetype i = 0; i < lines.size(); ++i) QVERIFY2(lines[i].startsWith(expected[i]), qPrintable(lines[i]));
      QCOMPARE(e.problems().size(), std::size_t(7));
      QCOMPARE(e.problems()[1].field, std::string("tiers[0].ttl"));
      QCOMPARE(e.problems()[1].line, std::size_t(4));
    }
  }

  void aSyntaxErrorStopsAtTheFirst() {
    const QString error = errorOf("{\n  \"docs_url\": \"/x\",,\n  \"tiers\": [ , ]\n}");
    QVERIFY2(error.startsWith(u"routes.json: line 2, column 20: not valid JSON"_s), qPrintable(error));
    QVERIFY(!error.contains(u'\n'));
  }
};

QTEST_GUILESS_MAIN(TestRouteTemplate)
#include "tst_routetemplate.moc"
