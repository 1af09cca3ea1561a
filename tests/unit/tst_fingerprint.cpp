// Request fingerprints: SHA-256, RFC 8785 canonical JSON (the RFC's own examples) and what
// each mode does and does not see.
#include <QtTest>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/fingerprint/canonical_text.h"
#include "core/fingerprint/fingerprint.h"

using namespace idem;
using nlohmann::json;

namespace {

QByteArray bytes(std::string_view s) { return QByteArray(s.data(), static_cast<qsizetype>(s.size())); }
QByteArray fastPath(std::string_view text) {
  const auto canonical = fp::canonicalJsonText(text);
  return canonical ? bytes(*canonical) : QByteArray("<declined>");
}

std::string hexFingerprint(const fp::Spec& spec, std::string_view body, const http::Headers& headers = {}) {
  return fp::toHex(fp::compute(spec, body, headers));
}

fp::Spec spec(fp::Mode mode, std::vector<std::string> fields = {}, std::vector<std::string> headers = {}) {
  return fp::Spec{mode, std::move(fields), std::move(headers)};
}

}  // namespace

class TestFingerprint : public QObject {
  Q_OBJECT

 private slots:
  void sha256KnownVectors_data() {
    // FIPS 180-2 Appendix B.1 and the digest of the empty message.
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("hex");
    QTest::newRow("abc") << QByteArray("abc")
                         << QByteArray("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    QTest::newRow("empty") << QByteArray()
                           << QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  }

  void sha256KnownVectors() {
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, hex);
    const std::string digest = fp::sha256(std::string_view(input.constData(), static_cast<std::size_t>(input.size())));
    QCOMPARE(digest.size(), std::size_t{32});
    QCOMPARE(bytes(fp::toHex(digest)), hex);
  }

  void rfc8785PrimitivesExample() {
    // RFC 8785 §3.2.2: the input and its canonical form, byte for byte.
    const char* input = R"({
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    })";
    const std::string expected =
        "{\"literals\":[null,true,false],"
        "\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
        "\"string\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
    QCOMPARE(bytes(fp::canonicalJson(json::parse(input))), bytes(expected));
    QCOMPARE(fastPath(input), bytes(expected));  // the streaming canonicaliser, Mode::Json's fast path
  }

  void rfc8785SortsByUtf16CodeUnits() {
    // RFC 8785 §3.2.3: the emoji (a surrogate pair, 0xD83D...) sorts before U+FB33 although its
    // code point is larger; U+0080 and above are written as UTF-8, "\r" is escaped.
    const char* input = R"({
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    })";
    const std::string expected =
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xC2\x80\":\"Control\","
        "\"\xC3\xB6\":\"Latin Small Letter O With Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\","
        "\"\xF0\x9F\x98\x80\":\"Emoji: Grinning Face\",\"\xEF\xAC\xB3\":\"Hebrew Letter Dalet With Dagesh\"}";
    QCOMPARE(bytes(fp::canonicalJson(json::parse(input))), bytes(expected));
    // The fast path leaves escaped and non-ASCII names to the DOM path, and Mode::Json agrees.
    QCOMPARE(fastPath(input), QByteArray("<declined>"));
    QCOMPARE(fp::compute(spec(fp::Mode::Json), input, {}), fp::sha256(expected));
  }

  void rfc8785Numbers_data() {
    // RFC 8785 Appendix B: IEEE 754 bit patterns and their ECMAScript serialisation.
    QTest::addColumn<quint64>("bits");
    QTest::addColumn<QByteArray>("expected");
    const std::pair<std::uint64_t, const char*> samples[] = {
        {0x0000000000000000, "0"},
        {0x8000000000000000, "0"},
        {0x0000000000000001, "5e-324"},
        {0x8000000000000001, "-5e-324"},
        {0x7fefffffffffffff, "1.7976931348623157e+308"},
        {0xffefffffffffffff, "-1.7976931348623157e+308"},
        {0x4340000000000000, "9007199254740992"},
        {0xc340000000000000, "-9007199254740992"},
        {0x4430000000000000, "295147905179352830000"},
        {0x44b52d02c7e14af5, "9.999999999999997e+22"},
        {0x44b52d02c7e14af6, "1e+23"},
        {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
        {0x444b1ae4d6e2ef4e, "999999999999999700000"},
        {0x444b1ae4d6e2ef4f, "999999999999999900000"},
        {0x444b1ae4d6e2ef50, "1e+21"},
        {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
        {0x3eb0c6f7a0b5ed8d, "0.000001"},
        {0x41b3de4355555553, "333333333.3333332"},
        {0x41b3de4355555554, "333333333.33333325"},
        {0x41b3de4355555555, "333333333.3333333"},
        {0x41b3de4355555556, "333333333.3333334"},
        {0x41b3de4355555557, "333333333.33333343"},
        {0xbecbf647612f3696, "-0.0000033333333333333333"},
        {0x43143ff3c1cb0959, "1424953923781206.2"},
    };
    for (const auto& [bits, text] : samples)
      QTest::addRow("%016llx", static_cast<unsigned long long>(bits)) << quint64{bits} << QByteArray(text);
  }

  void rfc8785Numbers() {
    QFETCH(quint64, bits);
    QFETCH(QByteArray, expected);
    const double value = std::bit_cast<double>(static_cast<std::uint64_t>(bits));
    QCOMPARE(bytes(fp::canonicalJson(json(value))), expected);
    // The canonical text reads back as the same double (the digits are round-trip digits).
    QCOMPARE(std::bit_cast<std::uint64_t>(json::parse(expected.toStdString()).get<double>() + 0.0),
             std::bit_cast<std::uint64_t>(value + 0.0));
  }

  void numberSpellingsInJsonText_data() {
    // Spellings of RFC 8785 values (§3.2.2 example and Appendix B) that reach the serialiser as
    // nlohmann integers or as doubles: each must come out as the RFC's text.
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("1e21 written as an integer") << QByteArray("1000000000000000000000") << QByteArray("1e+21");
    QTest::newRow("1E30") << QByteArray("1E30") << QByteArray("1e+30");
    QTest::newRow("4.50") << QByteArray("4.50") << QByteArray("4.5");
    QTest::newRow("2e-3") << QByteArray("2e-3") << QByteArray("0.002");
    QTest::newRow("1e-27 in full") << QByteArray("0.000000000000000000000000001") << QByteArray("1e-27");
    QTest::newRow("-0") << QByteArray("-0") << QByteArray("0");
    QTest::newRow("-0.0") << QByteArray("-0.0") << QByteArray("0");
    QTest::newRow("2^53 as an integer") << QByteArray("9007199254740992") << QByteArray("9007199254740992");
    QTest::newRow("5e-324") << QByteArray("5e-324") << QByteArray("5e-324");
    QTest::newRow("0.000001") << QByteArray("0.000001") << QByteArray("0.000001");
    QTest::newRow("333333333.33333329") << QByteArray("333333333.33333329") << QByteArray("333333333.3333333");
  }

  void numberSpellingsInJsonText() {
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QCOMPARE(bytes(fp::canonicalJson(json::parse(text.toStdString()))), expected);
    QCOMPARE(fastPath(text.toStdString()), expected);
  }

  void exponentFormBoundaries() {
    // ECMA-262 Number::toString switches to exponent form below 1e-6 and from 1e21 on.
    QCOMPARE(fp::canonicalJson(json(1e-7)), std::string("1e-7"));
    QCOMPARE(fp::canonicalJson(json(1e-6)), std::string("0.000001"));
    QCOMPARE(fp::canonicalJson(json(1e21)), std::string("1e+21"));
    QCOMPARE(fp::canonicalJson(json(1e20)), std::string("100000000000000000000"));
  }

  void integersAreFormattedAsTheirDouble_data() {
    QTest::addColumn<qint64>("signedValue");
    QTest::addColumn<quint64>("unsignedValue");
    QTest::newRow("small") << qint64{42} << quint64{42};
    QTest::newRow("2^53 + 1") << qint64{9007199254740993} << quint64{9007199254740993};
    QTest::newRow("int64 max") << std::numeric_limits<qint64>::max() << std::numeric_limits<quint64>::max();
    QTest::newRow("negative") << qint64{-123456789012345678} << quint64{10000000000000000000u};
  }

  void integersAreFormattedAsTheirDouble() {
    // JCS treats every JSON number as an IEEE double: an exact 64-bit integer must be written
    // exactly as the double it rounds to.
    QFETCH(qint64, signedValue);
    QFETCH(quint64, unsignedValue);
    QCOMPARE(fp::canonicalJson(json(std::int64_t{signedValue})),
             fp::canonicalJson(json(static_cast<double>(signedValue))));
    QCOMPARE(fp::canonicalJson(json(std::uint64_t{unsignedValue})),
             fp::canonicalJson(json(static_cast<double>(unsignedValue))));
  }

  void nonFiniteNumbersAreRejected() {
    // RFC 8785 Appendix B: NaN and Infinity have no serialisation.
    QVERIFY_THROWS_EXCEPTION(fp::InvalidJson, (void)fp::canonicalJson(json(std::nan(""))));
    QVERIFY_THROWS_EXCEPTION(fp::InvalidJson, (void)fp::canonicalJson(json(std::numeric_limits<double>::infinity())));
  }

  void invalidUtf8StringIsRejected() {
    // A value built in code (not parsed) may hold bytes that are not UTF-8.
    QVERIFY_THROWS_EXCEPTION(fp::InvalidJson, (void)fp::canonicalJson(json(std::string("\xC3\x28"))));
    QVERIFY_THROWS_EXCEPTION(fp::InvalidJson, (void)fp::canonicalJson(json::object({{"\xED\xA0\x80", 1}})));
  }

  void deepNestingDoesNotOverflowTheStack() {
    const std::size_t depth = 200000;
    const std::string text = std::string(depth, '[') + std::string(depth, ']');
    QCOMPARE(fp::canonicalJson(json::parse(text)), text);  // already canonical
  }

  void bodiesDeeperThanTheLimitAreRefused() {
    // A client body nested deeper than 64 levels is refused before any canonical form is built
    // (a fields fingerprint would copy the selected subtree recursively), in every JSON mode.
    const auto nested = [](std::size_t depth) {
      return R"({"amount":1,"deep":)" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
    };
    for (const auto& s : {spec(fp::Mode::Json), spec(fp::Mode::Fields, {"/deep"})}) {
      QVERIFY(!fp::compute(s, nested(64), {}).empty());  // the limit itself is fine
      try {
        (void)fp::compute(s, nested(65), {});
        QFAIL("a body 65 levels deep was fingerprinted");
      } catch (const fp::InvalidJson& e) {
        QVERIFY2(std::string(e.what()).find("64") != std::string::npos, e.what());
      }
    }
    QVERIFY(!fp::compute(spec(fp::Mode::Body), nested(65), {}).empty());  // raw bytes: no parsing
  }

  void jsonModeIgnoresWhitespaceAndMemberOrder() {
    const std::string a = R"({"amount":100,"currency":"EUR","meta":{"x":1,"y":[1,2]}})";
    const std::string b = "{ \"currency\" : \"EUR\",\n  \"meta\": {\"y\": [1, 2], \"x\": 1.0},\n  \"amount\": 1e2 }";
    QCOMPARE(hexFingerprint(spec(fp::Mode::Json), a), hexFingerprint(spec(fp::Mode::Json), b));
    QVERIFY(hexFingerprint(spec(fp::Mode::Body), a) != hexFingerprint(spec(fp::Mode::Body), b));
    // A different value is a different request.
    const std::string c = R"({"amount":101,"currency":"EUR","meta":{"x":1,"y":[1,2]}})";
    QVERIFY(hexFingerprint(spec(fp::Mode::Json), a) != hexFingerprint(spec(fp::Mode::Json), c));
    // Array order is content, not layout.
    const std::string d = R"({"amount":100,"currency":"EUR","meta":{"x":1,"y":[2,1]}})";
    QVERIFY(hexFingerprint(spec(fp::Mode::Json), a) != hexFingerprint(spec(fp::Mode::Json), d));
  }

  void withoutHeadersTheFingerprintIsThePlainDigest() {
    // So that an operator can recompute it with standard tools.
    const std::string body = R"({"b":1, "a":2})";
    QCOMPARE(fp::compute(spec(fp::Mode::Body), body, {}), fp::sha256(body));
    QCOMPARE(fp::compute(spec(fp::Mode::Json), body, {}), fp::sha256(fp::canonicalJson(json::parse(body))));
    QCOMPARE(fp::compute(spec(fp::Mode::None), body, {}), fp::sha256(""));
    QCOMPARE(fp::compute(spec(fp::Mode::None), "anything else", {}), fp::sha256(""));
  }

  void fieldsModeSeesOnlySelectedPointers() {
    const auto s = spec(fp::Mode::Fields, {"/amount", "/payee/iban"});
    const std::string base = R"({"amount":100,"payee":{"iban":"DE89","name":"A"},"note":"x"})";
    const std::string otherNote = R"({"note":"y","payee":{"name":"B","iban":"DE89"},"amount":100.0})";
    const std::string otherIban = R"({"amount":100,"payee":{"iban":"FR76","name":"A"},"note":"x"})";
    QCOMPARE(hexFingerprint(s, base), hexFingerprint(s, otherNote));
    QVERIFY(hexFingerprint(s, base) != hexFingerprint(s, otherIban));
    // The listed order of pointers does not matter.
    QCOMPARE(hexFingerprint(spec(fp::Mode::Fields, {"/payee/iban", "/amount"}), base), hexFingerprint(s, base));
    // It covers exactly the canonical object {pointer: value}.
    QCOMPARE(fp::compute(s, base, {}), fp::sha256(R"({"/amount":100,"/payee/iban":"DE89"})"));
  }

  void fieldsModeReadsMissingPointersAsNull() {
    const auto s = spec(fp::Mode::Fields, {"/amount", "/ref", "/items/5", "/amount/deeper"});
    const std::string missing = R"({"amount":1,"items":[]})";
    QCOMPARE(fp::compute(s, missing, {}),
             fp::sha256(R"({"/amount":1,"/amount/deeper":null,"/items/5":null,"/ref":null})"));
    QCOMPARE(hexFingerprint(s, missing), hexFingerprint(s, R"({"amount":1,"ref":null})"));
    QVERIFY(hexFingerprint(s, missing) != hexFingerprint(s, R"({"amount":1,"ref":""})"));
  }

  void fieldsModeRejectsAMalformedPointer() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, (void)fp::compute(spec(fp::Mode::Fields, {"amount"}), "{}", {}));
  }

  void headersChangeTheFingerprint() {
    const std::string body = R"({"a":1})";
    for (const auto mode : {fp::Mode::None, fp::Mode::Body, fp::Mode::Json, fp::Mode::Fields}) {
      const auto s = spec(mode, {"/a"}, {"X-Tenant", "Content-Type"});
      const http::Headers h1{{"x-tenant", "acme"}, {"Content-Type", "application/json"}, {"X-Trace", "1"}};
      const http::Headers h2{{"X-TENANT", "acme"}, {"content-type", "application/json"}, {"X-Trace", "2"}};
      const http::Headers h3{{"x-tenant", "globex"}, {"Content-Type", "application/json"}};
      const http::Headers emptyTenant{{"x-tenant", ""}, {"Content-Type", "application/json"}};
      const http::Headers noTenant{{"Content-Type", "application/json"}};
      const auto name = fp::modeName(mode);
      const QByteArray what(name.data(), static_cast<qsizetype>(name.size()));
      // Name case and unselected headers do not matter.
      QVERIFY2(hexFingerprint(s, body, h1) == hexFingerprint(s, body, h2), what.constData());
      QVERIFY2(hexFingerprint(s, body, h1) != hexFingerprint(s, body, h3), what.constData());
      QVERIFY2(hexFingerprint(s, body, emptyTenant) != hexFingerprint(s, body, noTenant), what.constData());
      QVERIFY2(hexFingerprint(s, body, h1) != hexFingerprint(spec(mode, {"/a"}), body, h1), what.constData());
    }
  }

  void headerValuesCannotImitateTheFraming() {
    const auto s = spec(fp::Mode::None, {}, {"a", "b"});
    const http::Headers h1{{"a", "1:b=1:x"}};
    const http::Headers h2{{"a", "1"}, {"b", "x"}};
    QVERIFY(hexFingerprint(s, "", h1) != hexFingerprint(s, "", h2));
    // Repeated field lines are one field, as HTTP combines them.
    QCOMPARE(hexFingerprint(s, "", {{"a", "x"}, {"a", "y"}}), hexFingerprint(s, "", {{"a", "x, y"}}));
  }

  void invalidJsonThrows_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("truncated") << QByteArray(R"({"a":)");
    QTest::newRow("trailing garbage") << QByteArray(R"({"a":1} x)");
    QTest::newRow("single quotes") << QByteArray("{'a':1}");
    QTest::newRow("lone surrogate") << QByteArray(R"(["\ud800"])");
    QTest::newRow("invalid UTF-8") << QByteArray("[\"\xC3\x28\"]");
    QTest::newRow("number overflow") << QByteArray("[1e400]");
  }

  void invalidJsonThrows() {
    QFETCH(QByteArray, body);
    const std::string_view b(body.constData(), static_cast<std::size_t>(body.size()));
    for (const auto mode : {fp::Mode::Json, fp::Mode::Fields}) {
      try {
        (void)fp::compute(spec(mode, {"/a"}), b, {});
        QFAIL("no InvalidJson thrown");
      } catch (const fp::InvalidJson& e) {
        // The message is for the client: it names the problem and what to send instead.
        QVERIFY2(std::string(e.what()).find("JSON") != std::string::npos, e.what());
      }
    }
    // Modes that do not read JSON accept any bytes.
    QCOMPARE(fp::compute(spec(fp::Mode::Body), b, {}), fp::sha256(b));
    QCOMPARE(fp::compute(spec(fp::Mode::None), b, {}), fp::sha256(""));
  }

  void modeNamesRoundTrip() {
    for (const auto mode : {fp::Mode::None, fp::Mode::Body, fp::Mode::Json, fp::Mode::Fields})
      QCOMPARE(fp::modeFromName(fp::modeName(mode)), std::optional<fp::Mode>(mode));
    QCOMPARE(fp::modeName(fp::Mode::Json), std::string_view("json"));
    QVERIFY(!fp::modeFromName("sha256"));
    QVERIFY(!fp::modeFromName(""));
  }
};

QTEST_GUILESS_MAIN(TestFingerprint)
#include "tst_fingerprint.moc"
