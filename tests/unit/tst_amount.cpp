// A tier's "amount" (where a response says how much was charged): the policy field's good and
// bad spellings with errors that name the field, its published form, the demo policy's paths,
// and reading the amount from stored responses (minor units, decimals, missing field,
// non-numeric, huge), exactly as written.
#include <QtTest>

#include "core/policy/policy.h"
#include "tests/unit/policytext.h"
#include "resources/embedded_resources.h"

using namespace idem;
using namespace idem::policy;
using nlohmann::json;

namespace {

using test::q;

// A policy whose payments tier has `amount` (JSON text, ' for ").
std::string withAmount(const std::string& amount) {
  return q("{'docs_url': '/idempotency', 'tiers': [{'name': 'payments', "
           "'routes': ['POST /v1/payments', 'POST /v1/refunds'], 'ttl': '24h', 'amount': " +
           amount + "}]}");
}

QString errorOf(const std::string& text) { return test::policyErrorOf(text, "p.json"); }

}  // namespace

class TestAmount : public QObject {
  Q_OBJECT

 private slots:
  void goodFieldsParseAndArePublished_data() {
    QTest::addColumn<QString>("amount");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("currency");
    QTest::addColumn<QString>("fallback");
    QTest::addColumn<bool>("minor");
    QTest::newRow("one for the tier")
        << "{'value': '/amount', 'currency': '/currency', 'minor_units': true}" << "POST /v1/refunds" << "/amount"
        << "/currency" << "" << true;
    QTest::newRow("a fixed currency, major units")
        << "{'value': '/total/gross', 'default_currency': 'eur', 'minor_units': false}" << "POST /v1/payments"
        << "/total/gross" << "" << "EUR" << false;
    QTest::newRow("per route, spelt otherwise")
        << "{'POST /v1//Refunds/': {'value': '/amount', 'default_currency': 'USD', 'minor_units': true}}"
        << "POST /v1/refunds" << "/amount" << "" << "USD" << true;
  }
  void goodFieldsParseAndArePublished() {
    QFETCH(QString, amount);
    QFETCH(QString, route);
    QFETCH(QString, value);
    QFETCH(QString, currency);
    QFETCH(QString, fallback);
    QFETCH(bool, minor);
    const Policy p = parsePolicy(withAmount(amount.toStdString()), "p.json");
    const AmountSpec* spec = p.tiers.at(0).amount.forRoute(route.toStdString());
    QVERIFY(spec != nullptr);
    QCOMPARE(QString::fromStdString(spec->value), value);
    QCOMPARE(QString::fromStdString(spec->currency), currency);
    QCOMPARE(QString::fromStdString(spec->defaultCurrency), fallback);
    QCOMPARE(spec->minorUnits, minor);
    // Published on /idempotency, read back the same.
    const json published = publishedJson(p).at("tiers").at(0).at("amount");
    QCOMPARE(parseAmountPaths(published, "published", "amount"), p.tiers.at(0).amount);
  }

  void aTierWithoutAmountPublishesNull() {
    const Policy p = parsePolicy(q("{'docs_url': '/d', 'tiers': [{'name': 't', 'routes': ['POST /x'], 'ttl': '1h'}]}"), "p");
    QVERIFY(p.tiers.at(0).amount.empty());
    QVERIFY(p.tiers.at(0).amount.forRoute("POST /x") == nullptr);
    QVERIFY(publishedJson(p).at("tiers").at(0).at("amount").is_null());
  }

  void badFieldsNameTheField_data() {
    QTest::addColumn<QString>("amount");
    QTest::addColumn<QString>("message");
    QTest::newRow("not an object") << "'/amount'" << "p.json: line 1, column 138: tiers[0].amount: must be {";
    QTest::newRow("no value") << "{'currency': '/currency', 'minor_units': true}"
                              << "p.json: line 1, column 138: tiers[0].amount.value: missing (required";
    QTest::newRow("value not a pointer") << "{'value': 'amount', 'currency': '/c', 'minor_units': true}"
                                         << "tiers[0].amount.value: \"amount\" is not a JSON pointer";
    QTest::newRow("no currency at all") << "{'value': '/amount', 'minor_units': true}"
                                        << "tiers[0].amount: names no currency";
    QTest::newRow("bad default currency") << "{'value': '/a', 'default_currency': 'dollars', 'minor_units': true}"
                                          << "tiers[0].amount.default_currency: \"dollars\" is not a currency code";
    QTest::newRow("minor units left out") << "{'value': '/a', 'currency': '/c'}"
                                          << "tiers[0].amount.minor_units: missing (required";
    QTest::newRow("minor units not a boolean") << "{'value': '/a', 'currency': '/c', 'minor_units': 'yes'}"
                                               << "tiers[0].amount.minor_units: must be true or false";
    QTest::newRow("unknown member") << "{'value': '/a', 'currency': '/c', 'minor_units': true, 'scale': 2}"
                                    << "tiers[0].amount.scale: unknown field";
    QTest::newRow("a route of another tier")
        << "{'POST /v1/orders': {'value': '/a', 'currency': '/c', 'minor_units': true}}"
        << "tiers[0].amount.POST /v1/orders: is not one of this tier's routes";
    QTest::newRow("a route that is no route")
        << "{'post /v1/payments': {'value': '/a', 'currency': '/c', 'minor_units': true}}"
        << "tiers[0].amount.post /v1/payments: is not a route";
  }
  void badFieldsNameTheField() {
    QFETCH(QString, amount);
    QFETCH(QString, message);
    const QString error = errorOf(withAmount(q(amount.toStdString())));
    QVERIFY2(!error.isEmpty(), "accepted");
    QVERIFY2(error.contains(message), qPrintable(error));
  }

  void theDemoPolicyNamesPaymentsAndRefunds() {
    const auto text = resources::find("policy/demo-policy.json");
    QVERIFY(text.has_value());
    const Policy p = parsePolicy(*text, "demo-policy.json");
    const Tier* payments = p.tierNamed("payments");
    QVERIFY(payments != nullptr);
    const AmountSpec* pay = payments->amount.forRoute("POST /v1/payments");
    const AmountSpec* refund = payments->amount.forRoute("POST /v1/refunds");
    QVERIFY(pay != nullptr && refund != nullptr);
    // What the demo's service answers (core/endpoint/resources.cpp) reads as the ledger does.
    QCOMPARE(formatMoney(*readAmount(*pay, R"({"id":"pay_1","amount":249900,"currency":"usd"})").money), "$2,499.00");
    QCOMPARE(formatMoney(*readAmount(*refund, R"({"id":"re_1","payment":"pay_1","amount":29900})").money), "$299.00");
  }

  void readsTheAmount_data() {
    QTest::addColumn<bool>("minor");
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("shown");    // formatMoney, "" when none
    QTest::addColumn<QString>("problem");  // part of the problem, "" when read
    auto row = [](const char* tag, bool minor, const char* body, const char* shown, const char* problem) {
      QTest::newRow(tag) << minor << QString::fromUtf8(body) << QString::fromUtf8(shown) << QString::fromUtf8(problem);
    };
    row("minor units", true, R"({"amount":249900,"currency":"usd"})", "$2,499.00", "");
    row("minor units, one cent", true, R"({"amount":1,"currency":"usd"})", "$0.01", "");
    row("minor units, no decimals (JPY)", true, R"({"amount":5000,"currency":"jpy"})", "¥5,000", "");
    row("minor units, three decimals (KWD)", true, R"({"amount":12345,"currency":"KWD"})", "KWD 12.345", "");
    row("minor units as a string", true, R"({"amount":"249900","currency":"eur"})", "€2,499.00", "");
    row("minor units written 2.499e5", true, R"({"amount":2.499e5,"currency":"usd"})", "$2,499.00", "");
    row("negative", true, R"({"amount":-2990,"currency":"gbp"})", "-£29.90", "");
    row("decimals", false, R"({"amount":2499.99,"currency":"usd"})", "$2,499.99", "");
    row("decimals as a string", false, R"({"amount":"2499.5","currency":"usd"})", "$2,499.50", "");
    row("a whole number in major units", false, R"({"amount":12,"currency":"chf"})", "CHF 12.00", "");
    row("fraction of a minor unit", true, R"({"amount":2499.5,"currency":"usd"})", "", "not a whole number of USD minor units");
    row("more decimals than the currency", false, R"({"amount":"1.005","currency":"usd"})", "", "more decimals than USD has (2)");
    row("missing field", true, R"({"currency":"usd"})", "", "the response has no /amount");
    row("non-numeric", true, R"({"amount":"twelve","currency":"usd"})", "", "/amount is \"twelve\", not a number");
    row("a boolean", true, R"({"amount":true,"currency":"usd"})", "", "/amount is true, not a number");
    row("huge integer", true, R"({"amount":123456789012345678901234567890,"currency":"usd"})", "", "too large to be an amount");
    row("huge exponent", false, R"({"amount":"1e400","currency":"usd"})", "", "too large to be an amount");
    row("largest accepted", false, R"({"amount":"999999999999999.99","currency":"usd"})", "$999,999,999,999,999.99", "");
    row("currency not a code", true, R"({"amount":100,"currency":"dollars"})", "", "/currency is \"dollars\", not a currency code");
    row("no currency, no default", true, R"({"amount":100})", "", "the response has no /currency");
    row("not JSON", true, "<html>502</html>", "", "not JSON");
    row("no body", true, "", "", "no response body");
  }
  void readsTheAmount() {
    QFETCH(bool, minor);
    QFETCH(QString, body);
    QFETCH(QString, shown);
    QFETCH(QString, problem);
    const AmountSpec spec{"/amount", "/currency", "", minor};
    const AmountReading r = readAmount(spec, body.toStdString());
    if (shown.isEmpty()) {
      QVERIFY2(!r.money, r.money ? formatMoney(*r.money).c_str() : "");
      QVERIFY2(QString::fromStdString(r.problem).contains(problem), r.problem.c_str());
    } else {
      QVERIFY2(r.money, r.problem.c_str());
      QCOMPARE(QString::fromStdString(formatMoney(*r.money)), shown);
      QVERIFY(r.problem.empty());
    }
  }

  void theDefaultCurrencyStandsInOnlyWhenTheResponseNamesNone() {
    const AmountSpec spec{"/amount", "/currency", "USD", true};
    QCOMPARE(readAmount(spec, R"({"amount":500})").money->currency, "USD");
    QCOMPARE(readAmount(spec, R"({"amount":500,"currency":"eur"})").money->currency, "EUR");
  }
};

QTEST_MAIN(TestAmount)
#include "tst_amount.moc"
