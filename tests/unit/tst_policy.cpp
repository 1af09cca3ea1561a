// The policy file (docs/design.md §4): every field's good and bad values, errors that name the file
// and the field, tier lookup, the demo policy and the published forms.
#include <QtTest>
#include <cstdio>
#include <fstream>

#include "core/policy/policy.h"
#include "tests/unit/policytext.h"
#include "core/policy/tenantsource.h"
#include "resources/embedded_resources.h"

using namespace idem;
using namespace idem::policy;
using namespace Qt::StringLiterals;
using nlohmann::json;

namespace {

using test::q;  // policy texts with ' for " (policytext.h says why)

// Two tiers, so that errors are seen to name the right one (tiers[1]).
const std::string kBase =
    q("{\n"
      "  'docs_url': 'https://api.example.com/idempotency',\n"
      "  'tenant_header': 'Account-Id',\n"
      "  'tiers': [\n"
      "    { 'name': 'payments', 'routes': ['POST /v1/payments'], 'ttl': '24h' },\n"
      "    { 'name': 'orders', 'routes': ['POST /v1/orders'], 'ttl': '30m' }\n"
      "  ]\n"
      "}\n");

// kBase with comments everywhere JSON allows whitespace.
const std::string kCommented =
    q("// leading comment\n"
      "{\n"
      "  /* block comment before a member */\n"
      "  'docs_url': 'https://api.example.com/idempotency', // trailing comment\n"
      "  'tenant_header': 'Account-Id',\n"
      "  'tiers': [\n"
      "    { 'name': 'payments', /* inline */ 'routes': ['POST /v1/payments'], 'ttl': '24h' },\n"
      "    // a whole line inside an array\n"
      "    { 'name': 'orders', 'routes': ['POST /v1/orders'], 'ttl': '30m' }\n"
      "  ]\n"
      "}\n"
      "/* trailing block */");

// kBase with other whitespace, member order and a comment.
const std::string kRespelt =
    q("/* the same policy, written differently */ {'tiers': [\n"
      "  {'ttl': '24h', 'routes': ['POST /v1/payments'], 'name': 'payments'},\n"
      "  {'ttl': '30m', 'name': 'orders', 'routes': ['POST /v1/orders']}],\n"
      "  'tenant_header': 'Account-Id', 'docs_url': 'https://api.example.com/idempotency'}");

const std::string kSource = "bad-policy.json";
const QString kRemove = QStringLiteral("<remove>");

// The base policy with the value at `pointer` replaced by `value` (JSON text) or removed.
std::string changed(const QString& pointer, const QString& value) {
  json doc = json::parse(kBase);
  const json::json_pointer at(pointer.toStdString());
  if (value == kRemove)
    doc[at.parent_pointer()].erase(at.back());
  else
    doc[at] = json::parse(value.toStdString());
  return doc.dump(2);
}

// The PolicyError message for `text`, or an empty string when it parses.
QString errorOf(const std::string& text, const std::string& source = kSource) {
  return test::policyErrorOf(text, source);
}

}  // namespace

class TestPolicy : public QObject {
  Q_OBJECT

  // One row of goodValuesArePublished: change `pointer` to `value`; publishedJson shows
  // `expected` at `published`.
  static void good(const char* tag, const QString& pointer, const QString& value, const QString& published,
                   const QString& expected) {
    QTest::newRow(tag) << pointer << value << published << expected;
  }
  // One row of badValuesNameTheFileAndTheField: change `pointer` to `value`; the error names
  // `path` and says `message`.
  static void bad(const char* tag, const QString& pointer, const QString& value, const QString& path,
                  const QString& message) {
    QTest::newRow(tag) << pointer << value << path << message;
  }

 private slots:
  void goodValuesArePublished_data() {
    QTest::addColumn<QString>("pointer");    // where the base policy is changed
    QTest::addColumn<QString>("value");      // the new value, as JSON
    QTest::addColumn<QString>("published");  // where publishedJson shows it
    QTest::addColumn<QString>("expected");   // what it shows, as JSON

    good("docs_url path", "/docs_url", R"("/idempotency")", "/docs_url", R"("/idempotency")");
    good("tenant_header empty", "/tenant_header", R"("")", "/tenant_header", R"("")");
    good("tenant_header absent", "/tenant_header", kRemove, "/tenant_header", R"("")");
    good("two routes", "/tiers/1/routes", R"(["POST /v1/orders", "PUT /v1/orders/bulk"])", "/tiers/1/routes",
         R"(["POST /v1/orders", "PUT /v1/orders/bulk"])");
    good("key_required false", "/tiers/1/key_required", "false", "/tiers/1/key_required", "false");
    good("key_required true", "/tiers/1/key_required", "true", "/tiers/1/key_required", "true");
    good("rollout observe", "/tiers/1/rollout", R"("observe")", "/tiers/1/rollout", R"("observe")");
    good("observe needs no key", "/tiers/1/rollout", R"("observe")", "/tiers/1/key_required", "false");
    good("rollout when-present", "/tiers/1/rollout", R"("when-present")", "/tiers/1/rollout", R"("when-present")");
    good("rollout required", "/tiers/1/rollout", R"("required")", "/tiers/1/key_required", "true");
    good("rollout defaults to required", "/tiers/1/rollout", kRemove, "/tiers/1/rollout", R"("required")");
    good("key_required false is when-present", "/tiers/1/key_required", "false", "/tiers/1/rollout",
         R"("when-present")");
    good("ttl 7d", "/tiers/1/ttl", R"("7d")", "/tiers/1/ttl", R"("7d")");
    good("ttl 7d seconds", "/tiers/1/ttl", R"("7d")", "/tiers/1/ttl_seconds", "604800");
    good("ttl 90m as 90m", "/tiers/1/ttl", R"("90m")", "/tiers/1/ttl", R"("90m")");
    good("ttl keeps its spelling", "/tiers/1/ttl", R"("120m")", "/tiers/1/ttl", R"("120m")");
    good("wait keeps its spelling", "/tiers/1/on_conflict", R"("wait:2000ms")", "/tiers/1/on_conflict",
         R"("wait:2000ms")");
    good("ttl 250ms seconds", "/tiers/1/ttl", R"("250ms")", "/tiers/1/ttl_seconds", "0.25");
    good("lease 2m", "/tiers/1/lease", R"("2m")", "/tiers/1/lease", R"("2m")");
    good("on_expired reject", "/tiers/1/on_expired", R"("reject")", "/tiers/1/on_expired", R"("reject")");
    good("on_expired execute", "/tiers/1/on_expired", R"("execute")", "/tiers/1/on_expired", R"("execute")");
    good("on_conflict 409", "/tiers/1/on_conflict", R"("409")", "/tiers/1/on_conflict", R"("409")");
    good("on_conflict wait:2s", "/tiers/1/on_conflict", R"("wait:2s")", "/tiers/1/on_conflict", R"("wait:2s")");
    good("on_conflict wait:1500ms", "/tiers/1/on_conflict", R"("wait:1500ms")", "/tiers/1/on_conflict",
         R"("wait:1500ms")");
    good("cache 2xx-only", "/tiers/1/cache", R"("2xx-only")", "/tiers/1/cache", R"("2xx-only")");
    good("cache after-start", "/tiers/1/cache", R"("after-start")", "/tiers/1/cache", R"("after-start")");
    good("fingerprint none", "/tiers/1/fingerprint", R"({"mode": "none"})", "/tiers/1/fingerprint",
         R"({"mode": "none", "fields": [], "headers": []})");
    good("fingerprint body + header", "/tiers/1/fingerprint", R"({"mode": "body", "headers": ["Content-Type"]})",
         "/tiers/1/fingerprint", R"({"mode": "body", "fields": [], "headers": ["Content-Type"]})");
    good("fingerprint fields", "/tiers/1/fingerprint", R"({"mode": "fields", "fields": ["/item", "/a~1b"]})",
         "/tiers/1/fingerprint", R"({"mode": "fields", "fields": ["/item", "/a~1b"], "headers": []})");
    good("fingerprint empty object is json", "/tiers/1/fingerprint", "{}", "/tiers/1/fingerprint/mode", R"("json")");
    good("fingerprint json, empty fields", "/tiers/1/fingerprint", R"({"mode": "json", "fields": []})",
         "/tiers/1/fingerprint/mode", R"("json")");
    good("archive_retention 30d", "/tiers/1/archive_retention", R"("30d")", "/tiers/1/archive_retention", R"("30d")");
    good("body_retention 7d", "/tiers/1/body_retention", R"("7d")", "/tiers/1/body_retention", R"("7d")");
    good("reference_windows", "/tiers/1/reference_windows", R"({"client_retry": "60m", "b": "2s"})",
         "/tiers/1/reference_windows", R"({"client_retry": "60m", "b": "2s"})");
    good("reference_windows empty", "/tiers/1/reference_windows", "{}", "/tiers/1/reference_windows", "{}");
    good("cross_key off by default", "/tiers/1/cross_key", kRemove, "/tiers/1/cross_key", R"({"mode": "off"})");
    good("cross_key hold", "/tiers/1/cross_key", R"({"mode": "hold", "window": "90s"})", "/tiers/1/cross_key",
         R"({"mode": "hold", "window": "90s", "confirm_header": "Idempotency-Duplicate-Confirmed"})");
    good("cross_key observe", "/tiers/1/cross_key", R"({"mode": "observe", "window": "2m"})",
         "/tiers/1/cross_key/mode", R"("observe")");
    good("cross_key off needs no window", "/tiers/1/cross_key", R"({"mode": "off"})", "/tiers/1/cross_key",
         R"({"mode": "off"})");
    good("replay_headers custom", "/tiers/1/replay_headers", R"(["Content-Type", "X-Request-Id"])",
         "/tiers/1/replay_headers", R"(["Content-Type", "X-Request-Id"])");
  }
  void goodValuesArePublished() {
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, published);
    QFETCH(QString, expected);
    const std::string text = changed(pointer, value);
    const QString error = errorOf(text);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const json out = publishedJson(parsePolicy(text, kSource));
    const json shown = out.at(json::json_pointer(published.toStdString()));
    QCOMPARE(QString::fromStdString(shown.dump()), QString::fromStdString(json::parse(expected.toStdString()).dump()));
  }

  void badValuesNameTheFileAndTheField_data() {
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("path");     // the field path the message must name
    QTest::addColumn<QString>("message");  // a part of what it must say

    // Top level.
    bad("docs_url missing", "/docs_url", kRemove, "docs_url", "missing");
    bad("docs_url number", "/docs_url", "42", "docs_url", "must be a string, not a number");
    bad("docs_url empty", "/docs_url", R"("")", "docs_url", "not a link");
    bad("docs_url ftp", "/docs_url", "\"ftp://example.com/x\"", "docs_url", "not a link");
    bad("docs_url space", "/docs_url", "\"https://a b/\"", "docs_url", "without spaces");
    bad("tenant_header number", "/tenant_header", "5", "tenant_header", "must be a string");
    bad("tenant_header null", "/tenant_header", "null", "tenant_header", "not null");
    bad("tenant_header space", "/tenant_header", R"("Account Id")", "tenant_header", "not an HTTP header name");
    bad("tiers missing", "/tiers", kRemove, "tiers", "missing");
    bad("tiers object", "/tiers", "{}", "tiers", "must be an array");
    bad("tiers empty", "/tiers", "[]", "tiers", "at least one tier");
    bad("tier not object", "/tiers/1", R"("orders")", "tiers[1]", "must be an object");
    bad("unknown top-level", "/colour", R"("red")", "colour", "unknown field");
    bad("misspelt top-level", "/tenant_headers", R"("X")", "tenant_headers", R"(did you mean "tenant_header"?)");

    // Tier fields.
    bad("unknown in tier", "/tiers/1/colour", R"("red")", "tiers[1].colour", "unknown field");
    bad("misspelt in tier", "/tiers/1/tll", R"("1h")", "tiers[1].tll", R"(did you mean "ttl"?)");
    bad("name missing", "/tiers/1/name", kRemove, "tiers[1].name", "missing");
    bad("name number", "/tiers/1/name", "7", "tiers[1].name", "must be a string");
    bad("name empty", "/tiers/1/name", R"("")", "tiers[1].name", "not a usable tier name");
    bad("name duplicate", "/tiers/1/name", R"("payments")", "tiers[1].name",
        R"("payments" is already the name of tiers[0])");
    bad("routes missing", "/tiers/1/routes", kRemove, "tiers[1].routes", "missing");
    bad("routes string", "/tiers/1/routes", R"("POST /v1/orders")", "tiers[1].routes", "must be an array");
    bad("routes empty", "/tiers/1/routes", "[]", "tiers[1].routes", "at least one route");
    bad("route number", "/tiers/1/routes/0", "12", "tiers[1].routes[0]", "must be a string");
    bad("route lower-case method", "/tiers/1/routes/0", R"("post /v1/orders")", "tiers[1].routes[0]", "upper-case");
    bad("route without method", "/tiers/1/routes/0", R"("/v1/orders")", "tiers[1].routes[0]", "is not a route");
    bad("route relative path", "/tiers/1/routes/0", R"("POST v1/orders")", "tiers[1].routes[0]", "must start with '/'");
    bad("route query string", "/tiers/1/routes/0", R"("POST /v1/orders?x=1")", "tiers[1].routes[0]", "query string");
    bad("route with space", "/tiers/1/routes/0", R"("POST /v1/orders HTTP/1.1")", "tiers[1].routes[0]", "spaces");
    bad("route twice in tier", "/tiers/1/routes", R"(["POST /v1/orders", "POST /v1/orders"])", "tiers[1].routes[1]",
        "listed twice");
    bad("route in two tiers", "/tiers/1/routes/0", R"("POST /v1/payments")", "tiers[1].routes[0]",
        "already listed at tiers[0].routes[0]");
    bad("key_required string", "/tiers/1/key_required", R"("yes")", "tiers[1].key_required", "must be true or false");
    bad("key_required number", "/tiers/1/key_required", "1", "tiers[1].key_required", "must be true or false");
    bad("rollout unknown", "/tiers/1/rollout", R"("shadow")", "tiers[1].rollout",
        R"("shadow" is not valid (use "observe")");
    bad("rollout number", "/tiers/1/rollout", "1", "tiers[1].rollout", "must be a string");
    bad("ttl missing", "/tiers/1/ttl", kRemove, "tiers[1].ttl", "missing");
    bad("ttl number", "/tiers/1/ttl", "30", "tiers[1].ttl", R"(duration string such as "24h")");
    bad("ttl bad unit", "/tiers/1/ttl", R"("24x")", "tiers[1].ttl",
        R"("24x" is not a duration (use 250ms, 2s, 30m, 24h or 30d))");
    bad("ttl two units", "/tiers/1/ttl", R"("1h30m")", "tiers[1].ttl", "not a duration");
    bad("ttl zero", "/tiers/1/ttl", R"("0s")", "tiers[1].ttl", "longer than zero");
    bad("ttl too long", "/tiers/1/ttl", R"("36501d")", "tiers[1].ttl", "too long");
    bad("lease bad", "/tiers/1/lease", R"("soon")", "tiers[1].lease", "not a duration");
    bad("lease zero", "/tiers/1/lease", R"("0ms")", "tiers[1].lease", "longer than zero");
    bad("lease as long as ttl", "/tiers/1/lease", R"("30m")", "tiers[1].lease", "not shorter than ttl (30m)");
    bad("lease longer than ttl", "/tiers/1/lease", R"("2h")", "tiers[1].lease", "a key is never expired while a lease");
    bad("on_expired bad", "/tiers/1/on_expired", R"("ignore")", "tiers[1].on_expired",
        R"("ignore" is not valid (use "execute")");
    bad("on_expired bool", "/tiers/1/on_expired", "true", "tiers[1].on_expired", "must be a string, not a boolean");
    bad("on_conflict number", "/tiers/1/on_conflict", "409", "tiers[1].on_conflict", "must be a string, not a number");
    bad("on_conflict 429", "/tiers/1/on_conflict", R"("429")", "tiers[1].on_conflict", "is not valid");
    bad("on_conflict wait bad duration", "/tiers/1/on_conflict", R"("wait:2x")", "tiers[1].on_conflict",
        R"("2x" is not a duration)");
    bad("on_conflict wait zero", "/tiers/1/on_conflict", R"("wait:0s")", "tiers[1].on_conflict", "longer than zero");
    bad("cache bad", "/tiers/1/cache", R"("always")", "tiers[1].cache", R"("always" is not valid (use "after-start")");
    bad("archive_retention bad", "/tiers/1/archive_retention", R"("1y")", "tiers[1].archive_retention",
        "not a duration");
    bad("body_retention bad", "/tiers/1/body_retention", R"("1y")", "tiers[1].body_retention", "not a duration");
    bad("body_retention beyond the row's", "/tiers/1/body_retention", R"("500d")", "tiers[1].body_retention",
        "longer than archive_retention (400d)");

    // Fingerprint.
    bad("fingerprint string", "/tiers/1/fingerprint", R"("json")", "tiers[1].fingerprint", "must be an object");
    bad("fingerprint unknown", "/tiers/1/fingerprint", R"({"mode": "json", "salt": 1})", "tiers[1].fingerprint.salt",
        "unknown field");
    bad("fingerprint misspelt", "/tiers/1/fingerprint", R"({"mode": "fields", "feilds": ["/a"]})",
        "tiers[1].fingerprint.feilds", R"(did you mean "fields"?)");
    bad("mode bad", "/tiers/1/fingerprint", R"({"mode": "xml"})", "tiers[1].fingerprint.mode",
        R"("xml" is not valid (use "none", "body", "json" or "fields"))");
    bad("mode number", "/tiers/1/fingerprint", R"({"mode": 2})", "tiers[1].fingerprint.mode", "must be a string");
    bad("fields missing", "/tiers/1/fingerprint", R"({"mode": "fields"})", "tiers[1].fingerprint.fields",
        R"(required with mode "fields")");
    bad("fields empty", "/tiers/1/fingerprint", R"({"mode": "fields", "fields": []})", "tiers[1].fingerprint.fields",
        R"(required with mode "fields")");
    bad("fields string", "/tiers/1/fingerprint", R"({"mode": "fields", "fields": "/a"})", "tiers[1].fingerprint.fields",
        "must be an array");
    bad("field without slash", "/tiers/1/fingerprint", R"({"mode": "fields", "fields": ["/a", "b"]})",
        "tiers[1].fingerprint.fields[1]", "start it with '/'");
    bad("field bad escape", "/tiers/1/fingerprint", R"({"mode": "fields", "fields": ["/a~2"]})",
        "tiers[1].fingerprint.fields[0]", "not a JSON pointer");
    bad("fields with mode json", "/tiers/1/fingerprint", R"({"mode": "json", "fields": ["/a"]})",
        "tiers[1].fingerprint.fields", R"(only used with mode "fields")");
    bad("fields with default mode", "/tiers/1/fingerprint", R"({"fields": ["/a"]})", "tiers[1].fingerprint.fields",
        R"(mode is "json")");
    bad("fingerprint header bad", "/tiers/1/fingerprint", R"({"headers": ["Bad Header"]})",
        "tiers[1].fingerprint.headers[0]", "not an HTTP header name");
    bad("fingerprint header twice", "/tiers/1/fingerprint", R"({"headers": ["X-A", "x-a"]})",
        "tiers[1].fingerprint.headers[1]", "listed twice");

    // Reference windows and replayed headers.
    bad("reference_windows array", "/tiers/1/reference_windows", "[]", "tiers[1].reference_windows",
        "must be an object");
    bad("reference window bad", "/tiers/1/reference_windows", R"({"ok": "1h", "channel_retry": "3 days"})",
        "tiers[1].reference_windows.channel_retry", "not a duration");
    bad("reference window number", "/tiers/1/reference_windows", R"({"channel_retry": 72})",
        "tiers[1].reference_windows.channel_retry", "duration string");
    bad("replay Set-Cookie", "/tiers/1/replay_headers", R"(["Set-Cookie"])", "tiers[1].replay_headers[0]", "cookies");
    bad("replay date any case", "/tiers/1/replay_headers", R"(["Content-Type", "date"])", "tiers[1].replay_headers[1]",
        "fresh Date");
    bad("replay Content-Length", "/tiers/1/replay_headers", R"(["Content-Length"])", "tiers[1].replay_headers[0]",
        "is never replayed");
    bad("replay string", "/tiers/1/replay_headers", R"("Content-Type")", "tiers[1].replay_headers", "must be an array");
    bad("replay none", "/tiers/1/replay_headers", "[]", "tiers[1].replay_headers",
        "leave it out to replay the defaults (Content-Type, ");
    bad("replay twice", "/tiers/1/replay_headers", R"(["ETag", "etag"])", "tiers[1].replay_headers[1]", "listed twice");
    bad("replay bad name", "/tiers/1/replay_headers", R"(["Content Type"])", "tiers[1].replay_headers[0]",
        "not an HTTP header name");

    // Duplicates across keys.
    bad("cross_key mode misspelt", "/tiers/1/cross_key", R"({"mode": "block", "window": "60s"})",
        "tiers[1].cross_key.mode", R"("block" is not valid (use "off", "observe")");
    bad("cross_key without window", "/tiers/1/cross_key", R"({"mode": "hold"})", "tiers[1].cross_key.window",
        "missing (required: how far back a match counts");
    bad("cross_key zero window", "/tiers/1/cross_key", R"({"mode": "reject", "window": "0s"})",
        "tiers[1].cross_key.window", "must be longer than zero");
    bad("cross_key unknown member", "/tiers/1/cross_key", R"({"mode": "hold", "window": "1m", "scope": "x"})",
        "tiers[1].cross_key.scope", "");
    bad("cross_key string", "/tiers/1/cross_key", R"("hold")", "tiers[1].cross_key", "must be an object");
    bad("cross_key without a fingerprint", "/tiers/1", R"({"name": "orders", "routes": ["POST /v1/orders"],
        "ttl": "1h", "fingerprint": {"mode": "none"}, "cross_key": {"mode": "hold", "window": "1m"}})",
        "tiers[1].cross_key", "needs a fingerprint that tells requests apart");

    // Durability.
    bad("durability misspelt", "/tiers/1/durability", R"("sync")", "tiers[1].durability",
        R"("sync" is not valid (use "synchronous")");
    bad("durability number", "/tiers/1/durability", "1", "tiers[1].durability", "must be a string");
    bad("on_weaker_store alone", "/tiers/1/on_weaker_store", R"("warn")", "tiers[1].on_weaker_store",
        R"(is never used unless durability is "synchronous")");
  }
  void badValuesNameTheFileAndTheField() {
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, path);
    QFETCH(QString, message);
    const QString error = errorOf(changed(pointer, value));
    QVERIFY2(!error.isEmpty(), "accepted");
    const QRegularExpression where(u"^"_s + QRegularExpression::escape(QString::fromStdString(kSource)) +
                                   u": line [1-9][0-9]*, column [1-9][0-9]*: "_s + QRegularExpression::escape(path) +
                                   u": "_s);
    QVERIFY2(where.match(error).hasMatch(), qPrintable(error));
    QVERIFY2(error.contains(message), qPrintable(error));
    // One mistake is one problem: the fields read after it are not blamed for it.
    QVERIFY2(!error.contains(u'\n'), qPrintable(error));
  }

  void textTheReaderRefusesStillEndsWithAnError() {
    // Found by fuzz_policy: a stray '}' inside the tiers array (and a member without its ':')
    // sent the position scanner into an endless loop; it must end, and the problem be named.
    const std::string text =
        R"({"docs_url":"https://x","tenant_header":"Tenant","tiers":[{"name":"f","routes":["PUT /x/y","POST /z"],)"
        R"("key_required":false,"on_expired"lease"ct","on_conflict":"wait:321m"}}]})";
    QVERIFY(!errorOf(text).isEmpty());
    QVERIFY(!errorOf(R"({"tiers":[1 / 2]})").isEmpty());
  }

  // key_required is the older spelling of two rollouts: both may be written when they agree;
  // a contradiction is a load error at key_required's line and column, like any other problem.
  void rolloutAndKeyRequiredMustAgree() {
    auto tier = [](const std::string& fields) {
      return q("{\n  'docs_url': '/a',\n  'tiers': [\n    { 'name': 'a', 'routes': ['POST /a'], 'ttl': '1h',\n      " +
               fields + " }\n  ]\n}\n");
    };
    QCOMPARE(parsePolicy(tier("'rollout': 'required', 'key_required': true"), kSource).tiers.at(0).rollout,
             Rollout::Required);
    QCOMPARE(parsePolicy(tier("'rollout': 'when-present', 'key_required': false"), kSource).tiers.at(0).rollout,
             Rollout::WhenPresent);
    QCOMPARE(parsePolicy(tier("'key_required': false"), kSource).tiers.at(0).rollout, Rollout::WhenPresent);
    const Tier observed = parsePolicy(tier("'rollout': 'observe'"), kSource).tiers.at(0);
    QVERIFY(observed.observed());
    QVERIFY(!observed.keyRequired());

    QCOMPARE(errorOf(tier("'rollout': 'when-present', 'key_required': true")),
             QStringLiteral(R"(bad-policy.json: line 5, column 50: tiers[0].key_required: true contradicts "rollout": )"
                            R"("when-present" (key_required true means "required"); keep only "rollout")"));
    QVERIFY(errorOf(tier("'rollout': 'observe', 'key_required': false"))
                .contains(R"(line 5, column 45: tiers[0].key_required: false contradicts "rollout": "observe")"));
    QVERIFY(errorOf(tier("'rollout': 'required', 'key_required': false")).contains("contradicts"));
    // Reported with the tier's other problems, all at once.
    const QString both = errorOf(tier("'rollout': 'observe', 'key_required': true, 'lease': 'soon'"));
    QVERIFY2(both.contains("tiers[0].key_required") && both.contains("tiers[0].lease"), qPrintable(both));
  }

  void publishedHtmlNamesTheRollout() {
    const std::string page =
        publishedHtml(parsePolicy(q("{'docs_url': '/a', 'tiers': [{'name': 'a', 'routes': ['POST /a'], 'ttl': '1h', "
                                    "'rollout': 'observe'}]}"),
                                  kSource));
    QVERIFY(page.find("rollout <code>observe</code>") != std::string::npos);
  }

  void onConflictMessageIsExact() {
    QCOMPARE(errorOf(changed(QStringLiteral("/tiers/1/on_conflict"), QStringLiteral(R"("wait")")), "demo.json"),
             QStringLiteral(R"(demo.json: line 14, column 22: tiers[1].on_conflict: "wait" is not valid (use "409" or )"
                            R"("wait:<duration>", e.g. "wait:2s"))"));
  }

  void durabilityIsPerTierAndRefusesByDefault() {
    const Policy p = parsePolicy(R"({"docs_url": "/a", "tiers": [
        {"name": "a", "routes": ["POST /a"], "ttl": "1h", "durability": "synchronous"},
        {"name": "b", "routes": ["POST /b"], "ttl": "1h", "durability": "synchronous", "on_weaker_store": "warn"},
        {"name": "c", "routes": ["POST /c"], "ttl": "1h", "durability": "any"},
        {"name": "d", "routes": ["POST /d"], "ttl": "1h"}]})",
                                 kSource);
    QVERIFY(p.tiers.at(0).durability == DurabilityNeed::Synchronous);
    QVERIFY(p.tiers.at(0).onWeakerStore == OnWeakerStore::Refuse);
    QVERIFY(p.tiers.at(1).onWeakerStore == OnWeakerStore::Warn);
    QVERIFY(p.tiers.at(2).durability == DurabilityNeed::Any);
    QVERIFY(p.tiers.at(3).durability == DurabilityNeed::Any);
    QCOMPARE(durabilityNeedName(p.tiers.at(0).durability), std::string_view("synchronous"));
    QCOMPARE(onWeakerStoreName(p.tiers.at(1).onWeakerStore), std::string_view("warn"));
    const QString error = errorOf(R"({"docs_url": "/a", "tiers": [{"name": "a", "routes": ["POST /a"], "ttl": "1h",
        "durability": "synchronous", "on_weaker_store": "ignore"}]})");
    QVERIFY2(error.contains(R"(tiers[0].on_weaker_store: "ignore" is not valid (use "refuse")"), qPrintable(error));
  }

  void defaultLeaseIsHalfOfAShortTtl() {
    const Policy p = parsePolicy(R"({"docs_url": "/a", "tiers": [{"name": "a", "routes": ["POST /a"], "ttl": "3s"}]})",
                                 kSource);
    QCOMPARE(p.tiers.at(0).lease, Millis(1500));
  }

  void defaultsApplyWhenFieldsAreAbsent() {
    const Policy p = parsePolicy(kBase, kSource);
    QCOMPARE(p.tiers.size(), std::size_t(2));
    const Tier& t = p.tiers[1];
    QCOMPARE(t.name, std::string("orders"));
    QVERIFY(t.keyRequired());
    QCOMPARE(t.ttl, Millis(30 * 60'000));
    QCOMPARE(t.lease, Millis(30'000));
    QCOMPARE(t.onExpired, OnExpired::Execute);
    QVERIFY(!t.onConflict.wait);
    QCOMPARE(t.cache, CacheRule::AfterStart);
    QCOMPARE(t.fingerprint.mode, fp::Mode::Json);
    QVERIFY(t.fingerprint.fields.empty());
    QCOMPARE(t.archiveRetention, Millis(400LL * 86'400'000));
    QVERIFY(t.referenceWindows.empty());
    QCOMPARE(t.replayHeaders, defaultReplayHeaders());
    QCOMPARE(p.source, kSource);
    QCOMPARE(p.tenantHeader, std::string("Account-Id"));
  }

  void defaultReplayHeadersNeverIncludeCookiesOrDate() {
    const auto& headers = defaultReplayHeaders();
    QCOMPARE(headers.size(), std::size_t(7));
    for (const auto& h : headers) {
      QVERIFY(h != "Set-Cookie");
      QVERIFY(h != "Date");
    }
    QVERIFY(std::find(headers.begin(), headers.end(), "Location") != headers.end());
  }

  void syntaxErrorNamesFileLineAndColumn_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("where");
    QTest::newRow("stray comma") << "{\n  \"docs_url\": \"/x\",\n  \"tiers\": [ , ]\n}"
                                 << "bad-policy.json: line 3, column 14: not valid JSON";
    // The parser stops at the end of the token it did not expect: here the closing quote of "/x".
    QTest::newRow("missing colon") << "{\n\n    \"docs_url\" \"/x\"\n}"
                                   << "bad-policy.json: line 3, column 19: ";
    QTest::newRow("unterminated comment") << "{ /* no end"
                                          << "bad-policy.json: line 1, column ";
    QTest::newRow("empty file") << ""
                                << "bad-policy.json: line 1, column 1: not valid JSON";
    QTest::newRow("trailing garbage") << "{}\n}"
                                      << "bad-policy.json: line 2, column 1: ";
  }
  void syntaxErrorNamesFileLineAndColumn() {
    QFETCH(QString, text);
    QFETCH(QString, where);
    const QString error = errorOf(text.toStdString());
    QVERIFY2(error.startsWith(where), qPrintable(error));
  }

  void memberWrittenTwiceIsAnError_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("path");
    QTest::newRow("top level") << R"({"docs_url": "/a", "docs_url": "/b", "tiers": []})"
                               << "docs_url";
    QTest::newRow("in second tier")
        << R"({"docs_url": "/a", "tiers": [{"name": "a", "ttl": "1h"}, {"name": "b", "ttl": "1h", "ttl": "2h"}]})"
        << "tiers[1].ttl";
    QTest::newRow("in fingerprint")
        << R"({"docs_url": "/a", "tiers": [{"fingerprint": {"mode": "json", "mode": "body"}}]})"
        << "tiers[0].fingerprint.mode";
    QTest::newRow("after nested arrays")
        << R"({"docs_url": "/a", "tiers": [{"routes": [[1], [2]]}, {"name": "x", "name": "y"}]})"
        << "tiers[1].name";
  }
  void memberWrittenTwiceIsAnError() {
    QFETCH(QString, text);
    QFETCH(QString, path);
    const QString error = errorOf(text.toStdString());
    QVERIFY2(error.startsWith(QString::fromStdString(kSource) + QStringLiteral(": line 1, column ")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral(": ") + path + QStringLiteral(": written twice")), qPrintable(error));
  }

  // Found by tests/fuzz/fuzz_policy: a number beyond a double is valid JSON syntax that the
  // JSON library refuses with an exception of another kind, which escaped parsePolicy.
  void numberBeyondADoubleIsAPolicyError() {
    const QString error = errorOf(q("{'docs_url': '/a', 'tiers': [{'name': 'a', 'routes': ['POST /a'], 'x': 1e400}]}"));
    QVERIFY2(error.startsWith(QStringLiteral("bad-policy.json: ")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("1e400")), qPrintable(error));
  }

  void topLevelMustBeAnObject() {
    const QString error = errorOf("[]");
    QVERIFY2(error.startsWith(QStringLiteral("bad-policy.json: line 1, column 1: a policy is a JSON object")),
             qPrintable(error));
  }

  void commentsAreAccepted() {
    const QString error = errorOf(kCommented);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const Policy withComments = parsePolicy(kCommented, "c.json");
    const Policy without = parsePolicy(kBase, "b.json");
    QCOMPARE(withComments.document, without.document);
    QCOMPARE(withComments.tiers.size(), std::size_t(2));
  }

  void tierForMatchesExactMethodAndPath_data() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QString>("tier");  // empty: no tier
    QTest::newRow("payments") << "POST"
                              << "/v1/payments"
                              << "payments";
    QTest::newRow("refunds") << "POST"
                             << "/v1/refunds"
                             << "payments";
    QTest::newRow("orders") << "POST"
                            << "/v1/orders"
                            << "orders";
    QTest::newRow("webhooks") << "POST"
                              << "/v1/webhooks/ack"
                              << "webhooks";
    QTest::newRow("other method") << "GET"
                                  << "/v1/payments"
                                  << "";
    QTest::newRow("lower-case method") << "post"
                                       << "/v1/payments"
                                       << "";
    QTest::newRow("trailing slash") << "POST"
                                    << "/v1/payments/"
                                    << "payments";  // spellings match: tst_routematch
    QTest::newRow("prefix") << "POST"
                            << "/v1/pay"
                            << "";
    QTest::newRow("longer path") << "POST"
                                 << "/v1/payments/pay_1"
                                 << "";
    QTest::newRow("query string") << "POST"
                                  << "/v1/payments?x=1"
                                  << "payments";
    QTest::newRow("empty") << ""
                           << ""
                           << "";
    QTest::newRow("method glued to path") << "POST /v1"
                                          << "/payments"
                                          << "";
  }
  void tierForMatchesExactMethodAndPath() {
    QFETCH(QString, method);
    QFETCH(QString, route);
    QFETCH(QString, tier);
    const Policy p = demoPolicy();
    const Tier* found = p.tierFor(method.toStdString(), route.toStdString());
    QCOMPARE(found ? QString::fromStdString(found->name) : QString(), tier);
    if (found) QCOMPARE(found, p.tierNamed(tier.toStdString()));
  }

  void tierNamedFindsOnlyExistingTiers() {
    const Policy p = demoPolicy();
    QVERIFY(p.tierNamed("orders") != nullptr);
    QCOMPARE(p.tierNamed("orders")->routes, std::vector<std::string>{"POST /v1/orders"});
    QVERIFY(p.tierNamed("Orders") == nullptr);
    QVERIFY(p.tierNamed("") == nullptr);
  }

  void demoPolicyParses() {
    const Policy p = demoPolicy();
    QCOMPARE(p.tenantHeader, std::string("Account-Id"));
    QCOMPARE(p.docsUrl, std::string("/idempotency"));
    QCOMPARE(p.tiers.size(), std::size_t(3));

    const Tier& pay = *p.tierNamed("payments");
    QCOMPARE(pay.routes, (std::vector<std::string>{"POST /v1/payments", "POST /v1/refunds"}));
    QCOMPARE(pay.ttl, Millis(24 * 3'600'000));
    QCOMPARE(pay.lease, Millis(30'000));
    QCOMPARE(pay.onExpired, OnExpired::Execute);
    QCOMPARE(pay.fingerprint.mode, fp::Mode::Json);
    QCOMPARE(pay.archiveRetention, Millis(400LL * 86'400'000));
    QCOMPARE(pay.referenceWindows.at("channel_retry"), Millis(72 * 3'600'000));
    QCOMPARE(pay.referenceWindows.at("reconciliation"), Millis(48 * 3'600'000));
    // The console flags this on purpose: reconciliation ends before the channel stops retrying.
    QVERIFY(pay.referenceWindows.at("reconciliation") < pay.referenceWindows.at("channel_retry"));

    const Tier& orders = *p.tierNamed("orders");
    QCOMPARE(orders.ttl, Millis(30 * 60'000));
    QVERIFY(orders.onConflict.wait);
    QCOMPARE(orders.onConflict.waitFor, Millis(2'000));
    QCOMPARE(orders.fingerprint.mode, fp::Mode::Fields);
    QCOMPARE(orders.fingerprint.fields, (std::vector<std::string>{"/item", "/quantity", "/customer"}));
    QCOMPARE(orders.referenceWindows.at("client_retry"), Millis(3'600'000));

    const Tier& hooks = *p.tierNamed("webhooks");
    QCOMPARE(hooks.routes, std::vector<std::string>{"POST /v1/webhooks/ack"});
    QVERIFY(!hooks.keyRequired());
    QCOMPARE(hooks.ttl, Millis(7LL * 86'400'000));
    QCOMPARE(hooks.fingerprint.mode, fp::Mode::Body);
    QCOMPARE(hooks.onExpired, OnExpired::Reject);
  }

  void demoPolicyHasComments() {
    // The file documents itself; its comments must keep parsing.
    const auto text = resources::find("policy/demo-policy.json");
    QVERIFY(text.has_value());
    QVERIFY(text->find("//") != std::string_view::npos);
  }

  void publishedJsonHasEachTier() {
    const json out = publishedJson(demoPolicy());
    QCOMPARE(out.at("key_header"), json("Idempotency-Key"));
    QCOMPARE(out.at("expiry_header"), json("Idempotency-Expires"));
    QCOMPARE(out.at("tenant_header"), json("Account-Id"));
    QCOMPARE(out.at("docs_url"), json("/idempotency"));
    QCOMPARE(out.at("tiers").size(), std::size_t(3));
    const json& pay = out.at("tiers").at(0);
    QCOMPARE(pay.at("name"), json("payments"));
    QCOMPARE(pay.at("routes"), json({"POST /v1/payments", "POST /v1/refunds"}));
    QCOMPARE(pay.at("ttl"), json("24h"));
    QCOMPARE(pay.at("ttl_seconds"), json(86400));
    QCOMPARE(pay.at("lease"), json("30s"));
    QCOMPARE(pay.at("archive_retention"), json("400d"));
    QCOMPARE(pay.at("body_retention"), json("30d"));
    QVERIFY(out.at("tiers").at(1).at("body_retention").is_null());  // bodies stay as long as rows
    QCOMPARE(pay.at("reference_windows"), json({{"channel_retry", "72h"}, {"reconciliation", "48h"}}));
    const json& orders = out.at("tiers").at(1);
    QCOMPARE(orders.at("name"), json("orders"));
    QCOMPARE(orders.at("on_conflict"), json("wait:2s"));
    QCOMPARE(orders.at("fingerprint").at("fields"), json({"/item", "/quantity", "/customer"}));
    const json& hooks = out.at("tiers").at(2);
    QCOMPARE(hooks.at("name"), json("webhooks"));
    QCOMPARE(hooks.at("key_required"), json(false));
    QCOMPARE(hooks.at("on_expired"), json("reject"));
    QCOMPARE(hooks.at("ttl"), json("7d"));
    QCOMPARE(hooks.at("fingerprint").at("mode"), json("body"));
  }

  void publishedJsonOfAPolicyBuiltInCode() {
    // No document to take the spelling from: durations are written in their largest exact unit.
    Policy p;
    p.docsUrl = "/idempotency";
    Tier t;
    t.name = "built";
    t.routes = {"PUT /v1/things"};
    t.ttl = Millis(86'400'000);
    t.onConflict = OnConflict{true, Millis(120'000)};
    t.referenceWindows = {{"late", Millis(90'000)}};
    p.tiers.push_back(t);
    const json out = publishedJson(p);
    const json& tier = out.at("tiers").at(0);
    QCOMPARE(tier.at("ttl"), json("1d"));
    QCOMPARE(tier.at("ttl_seconds"), json(86400));
    QCOMPARE(tier.at("lease"), json("30s"));
    QCOMPARE(tier.at("on_conflict"), json("wait:2m"));
    QCOMPARE(tier.at("reference_windows"), json({{"late", "90s"}}));
    QCOMPARE(tier.at("fingerprint").at("mode"), json("json"));
    QCOMPARE(tier.at("replay_headers"), json(defaultReplayHeaders()));  // empty means the defaults
    QCOMPARE(out.at("tenant_header"), json(""));
  }

  void publishedHtmlExplainsEachTier() {
    const QString html = QString::fromStdString(publishedHtml(demoPolicy()));
    QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
    for (const char* needle :
         {"POST /v1/payments", "POST /v1/refunds", "POST /v1/orders", "POST /v1/webhooks/ack", "24 h",
          "<code>24h</code>", "30 min", "7 days", "Idempotent-Replayed: true", "Idempotency-Expires", "409", "422",
          "400", "Retry-After", "Account-Id", "processed as a new request", "Honoured when sent", "waits up to 2 s"})
      QVERIFY2(html.contains(QLatin1String(needle)), needle);
    // Self-contained: no scripts, no external stylesheets or images.
    QVERIFY(!html.contains(QStringLiteral("<script")));
    QVERIFY(!html.contains(QStringLiteral("<link")));
    QVERIFY(!html.contains(QStringLiteral("src=")));
  }

  void publishedHtmlEscapesEveryValue() {
    json doc = json::parse(kBase);
    doc["docs_url"] = "https://x.test/<script>alert('x')</script>";
    doc["tiers"][1]["name"] = "<b>\"orders\" & co</b>";
    doc["tiers"][1]["routes"] = {"POST /v1/<i>orders</i>"};
    const QString html = QString::fromStdString(publishedHtml(parsePolicy(doc.dump(), kSource)));
    QVERIFY(!html.contains(QStringLiteral("<script")));
    QVERIFY(html.contains(QStringLiteral("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;")));
    QVERIFY(html.contains(QStringLiteral("&lt;b&gt;&quot;orders&quot; &amp; co&lt;/b&gt;")));
    QVERIFY(!html.contains(QStringLiteral("<b>\"orders")));
    QVERIFY(html.contains(QStringLiteral("POST /v1/&lt;i&gt;orders&lt;/i&gt;")));
    QVERIFY(!html.contains(QStringLiteral("<i>")));
  }

  void sha256IdentifiesTheDocumentNotItsSpelling() {
    const Policy base = parsePolicy(kBase, kSource);
    const std::string digest = base.sha256();
    QCOMPARE(digest.size(), std::size_t(64));
    QVERIFY(digest.find_first_not_of("0123456789abcdef") == std::string::npos);
    // Whitespace, member order and comments do not change the identity...
    QCOMPARE(parsePolicy(kRespelt, "other.json").sha256(), digest);
    // ...a changed value does.
    QVERIFY(parsePolicy(changed(QStringLiteral("/tiers/1/ttl"), QStringLiteral(R"("31m")")), kSource).sha256() !=
            digest);
  }

  void loadPolicyFileNamesThePath() {
    const QString missing = QDir::temp().filePath(QStringLiteral("idem-no-such-policy.json"));
    try {
      (void)loadPolicyFile(missing.toStdString());
      QFAIL("a missing file was accepted");
    } catch (const PolicyError& e) {
      QVERIFY2(QString::fromStdString(e.what()).startsWith(missing + QStringLiteral(": cannot read")), e.what());
    }

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath(QStringLiteral("tiers.json")).toStdString();
    std::ofstream(path) << changed(QStringLiteral("/tiers/0/cache"), QStringLiteral(R"("never")"));
    try {
      (void)loadPolicyFile(path);
      QFAIL("a bad cache value was accepted");
    } catch (const PolicyError& e) {
      QVERIFY2(QString::fromStdString(e.what()).startsWith(QString::fromStdString(path) +
                                                           QStringLiteral(": line 6, column 16: tiers[0].cache: \"never\"")),
               e.what());
    }

    std::ofstream(path, std::ios::trunc) << kBase;
    const Policy p = loadPolicyFile(path);
    QCOMPARE(p.source, path);
    QCOMPARE(p.tiers.size(), std::size_t(2));
  }

 private:
  static Policy demoPolicy() {
    const auto text = resources::find("policy/demo-policy.json");
    if (!text) throw std::runtime_error("policy/demo-policy.json is not embedded");
    return parsePolicy(*text, "demo-policy.json");
  }

  void tenantSourcesAreOneAtMostAndRecorded() {
    const std::string tiers = R"("tiers":[{"name":"p","routes":["POST /p"],"ttl":"1h"}])";
    const auto parse = [&](const std::string& fields) {
      return parsePolicy("{\"docs_url\":\"/d\"," + fields + tiers + "}", "t.json");
    };
    QCOMPARE(parse("").tenantSource(), std::string());
    QCOMPARE(parse(R"("tenant_header":"X-Tenant",)").tenantSource(), std::string("header X-Tenant"));
    QCOMPARE(parse(R"("single_tenant":true,)").tenantSource(), std::string("single tenant"));
    const auto auth = parse(R"("tenant_from_authorization":true,)");
    QCOMPARE(auth.tenantSource(), std::string("authorization digest"));
    QVERIFY(auth.tenantFromAuthorization);
    QVERIFY(auth.tenantRequired);
    for (const char* both : {R"("tenant_header":"X","tenant_from_authorization":true,)",
                             R"("tenant_header":"X","single_tenant":true,)",
                             R"("tenant_from_authorization":true,"single_tenant":true,)"}) {
      try {
        (void)parse(both);
        QFAIL(both);
      } catch (const PolicyError& e) {
        QVERIFY2(std::string(e.what()).find("choose one") != std::string::npos, e.what());
      }
    }
    // A flag's source is written into the document: the recorded policy (its sha) says it.
    auto p = parse("");
    const std::string before = p.sha256();
    setTenantSource(p, TenantSourceKind::Authorization);
    QVERIFY(p.sha256() != before);
    QCOMPARE(p.tenantSource(), std::string("authorization digest"));
    setTenantSource(p, TenantSourceKind::Header, "X-Tenant");
    QCOMPARE(p.tenantSource(), std::string("header X-Tenant"));
    QVERIFY(!p.document.contains("tenant_from_authorization"));
    // Different credentials, different tenants; never the credential itself.
    QVERIFY(credentialTenant("Bearer alice") != credentialTenant("Bearer bob"));
    QCOMPARE(credentialTenant("Bearer alice"), credentialTenant("Bearer alice"));
    QVERIFY(credentialTenant("Bearer alice").find("alice") == std::string::npos);
    QCOMPARE(credentialTenant("x").size(), std::size_t(5 + 32));
  }
};

QTEST_APPLESS_MAIN(TestPolicy)
#include "tst_policy.moc"
