// Idempotency-Key parsing: the RFC 9651 String vectors, parameters of every bare-item type,
// and the key rules of docs/design.md §2.
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/http/keyheader.h"
#include "tests/support/testdb.h"

using namespace idem;
using http::KeyError;

Q_DECLARE_METATYPE(idem::http::KeyError)

namespace {

nlohmann::json loadVectors(const std::string& file) {
  std::ifstream in(test::dataPath("sf/" + file));
  if (!in) throw std::runtime_error("cannot open test vectors " + file);
  return nlohmann::json::parse(in);
}

QByteArray bytes(std::string_view s) { return QByteArray(s.data(), static_cast<qsizetype>(s.size())); }
std::string_view view(const QByteArray& b) { return {b.constData(), static_cast<std::size_t>(b.size())}; }

// Field lines of one header are combined with ", " before parsing (RFC 9651 §4.2).
std::string joinLines(const nlohmann::json& lines) {
  std::string out;
  for (const auto& line : lines) {
    if (!out.empty()) out += ", ";
    out += line.get<std::string>();
  }
  return out;
}

}  // namespace

class TestKeyHeader : public QObject {
  Q_OBJECT

 private slots:
  void sfVectors_data() {
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<bool>("mustFail");
    QTest::addColumn<bool>("canFail");
    QTest::addColumn<bool>("isString");
    QTest::addColumn<QByteArray>("expected");
    QTest::addColumn<QByteArray>("canonical");
    for (const char* file : {"string.json", "item.json"}) {
      for (const auto& v : loadVectors(file)) {
        const std::string raw = joinLines(v.at("raw"));
        const bool mustFail = v.value("must_fail", false);
        const bool isString = !mustFail && v.at("expected").at(0).is_string();
        const std::string expected = isString ? v["expected"][0].get<std::string>() : std::string();
        const std::string canonical = v.contains("canonical") ? joinLines(v["canonical"]) : raw;
        QTest::addRow("%s: %s", file, v.at("name").get<std::string>().c_str())
            << bytes(raw) << mustFail << v.value("can_fail", false) << isString << bytes(expected) << bytes(canonical);
      }
    }
  }

  void sfVectors() {
    QFETCH(QByteArray, raw);
    QFETCH(bool, mustFail);
    QFETCH(bool, canFail);
    QFETCH(bool, isString);
    QFETCH(QByteArray, expected);
    QFETCH(QByteArray, canonical);
    const auto parsed = http::parseSfString(view(raw));
    if (mustFail) {
      QVERIFY2(!parsed, "a must_fail vector was accepted");
      return;
    }
    if (!isString) {
      // A valid Item whose bare item is not a String is not what parseSfString accepts.
      QVERIFY(!parsed);
      return;
    }
    if (canFail && !parsed) return;
    QVERIFY(parsed);
    QCOMPARE(bytes(*parsed), expected);
    const auto serialized = http::serializeSfString(view(expected));
    QVERIFY(serialized);
    QCOMPARE(bytes(*serialized), canonical);
  }

  void serialisationVectors_data() {
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("mustFail");
    QTest::addColumn<QByteArray>("canonical");
    for (const auto& v : loadVectors("serialisation-string-generated.json")) {
      const bool mustFail = v.value("must_fail", false);
      QTest::addRow("%s", v.at("name").get<std::string>().c_str())
          << bytes(v.at("expected").at(0).get<std::string>()) << mustFail
          << bytes(mustFail ? std::string() : joinLines(v.at("canonical")));
    }
  }

  void serialisationVectors() {
    QFETCH(QByteArray, value);
    QFETCH(bool, mustFail);
    QFETCH(QByteArray, canonical);
    const auto serialized = http::serializeSfString(view(value));
    if (mustFail) {
      QVERIFY(!serialized);
    } else {
      QVERIFY(serialized);
      QCOMPARE(bytes(*serialized), canonical);
    }
  }

  void serializeEscapesQuoteAndBackslash() {
    // RFC 9651 §4.1.6: '"' and '\' are the only characters escaped.
    const auto s = http::serializeSfString("a\"b\\c");
    QVERIFY(s);
    QCOMPARE(bytes(*s), QByteArray("\"a\\\"b\\\\c\""));
    QCOMPARE(http::parseSfString(*s), std::optional<std::string>("a\"b\\c"));
  }

  // Parameters after the String: every bare-item type of RFC 9651 §3.3 must be parsed, and a
  // malformed one makes the whole Item invalid.
  void parameters_data() {
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<bool>("valid");
    const std::pair<const char*, bool> cases[] = {
        {"\"abc\";p=1", true},
        {"\"abc\";p=-42", true},
        {"\"abc\";p=123456789012345", true},    // 15 digits: the most an Integer has
        {"\"abc\";p=1234567890123456", false},  // 16 digits
        {"\"abc\";p=-", false},
        {"\"abc\";p=1.5", true},
        {"\"abc\";p=123456789012.123", true},  // 12 + 3 digits: the largest Decimal
        {"\"abc\";p=1234567890123.1", false},  // 13 integer digits
        {"\"abc\";p=1.1234", false},           // 4 fraction digits
        {"\"abc\";p=1.", false},
        {"\"abc\";p=\"x y\"", true},
        {"\"abc\";p=\"x", false},
        {"\"abc\";p=tok/en:x", true},
        {"\"abc\";p=*tok", true},
        {"\"abc\";p=:aGVsbG8=:", true},
        {"\"abc\";p=::", true},
        {"\"abc\";p=:aGVs bG8=:", false},
        {"\"abc\";p=:aGVsbG8=", false},
        {"\"abc\";p=?1", true},
        {"\"abc\";p=?0", true},
        {"\"abc\";p=?2", false},
        {"\"abc\";p", true},  // a bare key is Boolean true
        {"\"abc\";p=@1659578233", true},
        {"\"abc\";p=@-1", true},
        {"\"abc\";p=@1.5", false},
        {"\"abc\";p=%\"f%c3%bc%c3%bc\"", true},
        {"\"abc\";p=%\"f%C3%BC\"", false},  // percent escapes are lower-case only
        {"\"abc\";p=%\"%ff\"", false},      // not UTF-8 once decoded
        {"\"abc\";p=%\"%c3\"", false},      // truncated UTF-8 sequence
        {"\"abc\";p=%\"%\"", false},
        {"\"abc\";p=%x", false},
        {"\"abc\";a=1;b;c=?0", true},
        {"\"abc\"; a=1", true},   // SP allowed after ';'
        {"\"abc\" ;a=1", false},  // but not before it
        {"\"abc\";a =1", false},
        {"\"abc\";A=1", false},  // keys are lower-case
        {"\"abc\";1a=1", false},
        {"\"abc\";*a_b-c.d=1", true},
        {"\"abc\";p=", false},
        {"\"abc\";p=1;p=2", true},  // a repeated key overrides, still valid
        {"\"abc\";", false},
        {"\"abc\",", false},
        {"\"abc\" \"def\"", false},
    };
    for (const auto& [raw, valid] : cases) QTest::newRow(raw) << QByteArray(raw) << valid;
  }

  void parameters() {
    QFETCH(QByteArray, raw);
    QFETCH(bool, valid);
    const auto parsed = http::parseSfString(view(raw));
    QCOMPARE(parsed.has_value(), valid);
    if (valid) QCOMPARE(*parsed, std::string("abc"));
    const auto key = http::parseIdempotencyKey(view(raw));
    QCOMPARE(key.key.has_value(), valid);
    if (!valid) QCOMPARE(key.error, KeyError::BadSfString);
  }

  void keys_data() {
    QTest::addColumn<QByteArray>("field");
    QTest::addColumn<QByteArray>("key");  // expected key when valid
    QTest::addColumn<KeyError>("error");
    const std::string uuid = "3f2504e0-4f89-41d3-9d2a-0c1a2b3c4d5e";
    const std::string max(http::kMaxKeyLength, 'k');
    const std::string tooLong(http::kMaxKeyLength + 1, 'k');
    const std::string megabyte(1 << 20, 'k');
    const auto ok = [](const char* name, const std::string& field, const std::string& key) {
      QTest::newRow(name) << bytes(field) << bytes(key) << KeyError::None;
    };
    const auto bad = [](const char* name, const std::string& field, KeyError e) {
      QTest::newRow(name) << bytes(field) << QByteArray() << e;
    };
    ok("bare uuid", uuid, uuid);
    ok("quoted uuid is the same key", "\"" + uuid + "\"", uuid);
    ok("quoted with ignored parameters", "\"" + uuid + "\";v=1", uuid);
    ok("single character", "k", "k");
    ok("255 characters", max, max);
    ok("255 characters quoted", "\"" + max + "\"", max);
    bad("256 characters", tooLong, KeyError::TooLong);
    bad("256 characters quoted", "\"" + tooLong + "\"", KeyError::TooLong);
    bad("1 MB bare", megabyte, KeyError::TooLong);
    bad("1 MB quoted", "\"" + megabyte + "\"", KeyError::TooLong);
    bad("empty", "", KeyError::Empty);
    bad("empty sf-string", "\"\"", KeyError::Empty);
    bad("only whitespace", " \t ", KeyError::Empty);
    bad("space inside", "ab cd", KeyError::BadCharacter);
    bad("space inside sf-string", "\"ab cd\"", KeyError::BadCharacter);
    bad("tab inside", "ab\tcd", KeyError::BadCharacter);
    bad("tab inside sf-string", "\"ab\tcd\"", KeyError::BadSfString);
    bad("NUL", std::string("ab\0cd", 5), KeyError::BadCharacter);
    bad("control 0x01",
        "ab\x01"
        "cd",
        KeyError::BadCharacter);
    bad("newline", "ab\ncd", KeyError::BadCharacter);
    bad("DEL",
        "ab\x7f"
        "cd",
        KeyError::BadCharacter);
    bad("non-ASCII UTF-8", "caf\xc3\xa9", KeyError::BadCharacter);
    bad("non-ASCII in sf-string", "\"caf\xc3\xa9\"", KeyError::BadSfString);
    bad("backslash", "ab\\cd", KeyError::BadCharacter);
    bad("escaped backslash in sf-string", "\"ab\\\\cd\"", KeyError::BadCharacter);
    bad("quote inside", "ab\"cd", KeyError::BadCharacter);
    bad("escaped quote in sf-string", "\"ab\\\"cd\"", KeyError::BadCharacter);
    bad("unterminated sf-string", "\"abc", KeyError::BadSfString);
    bad("text after sf-string", "\"abc\" def", KeyError::BadSfString);
    ok("leading and trailing OWS trimmed", " \t abc \t", "abc");
    ok("OWS around sf-string trimmed", "\t \"abc\"  \t", "abc");
    ok("bare value is taken as is", "abc;p=1", "abc;p=1");
    ok("all visible ASCII but quote and backslash", "!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~",
       "!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~");
  }

  void keys() {
    QFETCH(QByteArray, field);
    QFETCH(QByteArray, key);
    QFETCH(KeyError, error);
    const auto parsed = http::parseIdempotencyKey(view(field));
    QCOMPARE(parsed.error, error);
    if (error == KeyError::None) {
      QVERIFY(parsed.key);
      QCOMPARE(bytes(*parsed.key), key);
      QVERIFY(parsed.rule.empty());
      // Strict out: the sf-string Idem writes reads back as the same key.
      const auto written = http::serializeSfString(*parsed.key);
      QVERIFY(written);
      QCOMPARE(http::parseIdempotencyKey(*written).key, parsed.key);
      return;
    }
    QVERIFY(!parsed.key);
    QVERIFY(!parsed.rule.empty());
    // The rule goes into a problem+json detail: printable ASCII only, whatever the input held.
    for (const char c : parsed.rule) QVERIFY2(c >= 0x20 && c <= 0x7E, parsed.rule.c_str());
  }

  void ruleNamesTheOffendingCharacter() {
    const auto parsed = http::parseIdempotencyKey(
        "abc\x01"
        "def");
    QCOMPARE(parsed.error, KeyError::BadCharacter);
    QVERIFY2(parsed.rule.find("0x01") != std::string::npos, parsed.rule.c_str());
    QVERIFY2(parsed.rule.find("position 4") != std::string::npos, parsed.rule.c_str());
    const auto longKey = http::parseIdempotencyKey(std::string(300, 'k'));
    QVERIFY2(longKey.rule.find("255") != std::string::npos, longKey.rule.c_str());
  }
};

QTEST_GUILESS_MAIN(TestKeyHeader)
#include "tst_keyheader.moc"
