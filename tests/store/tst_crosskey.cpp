// Explain and the customer letter on duplicates across keys (issue 32, item 2) against a real
// store, on pairs made as the enforcer makes them (tests/store/crosskey_pairs.h): the later key
// names the earlier execution in support's words, the earlier one names the later, and the
// resolution and the letter say what to do for each mode (observe, hold, confirmed, reject).
#include <QtTest>

#include <algorithm>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/letter.h"
#include "core/explain/loader.h"
#include "tests/store/crosskey_pairs.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using nlohmann::json;
using trace::Outcome;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

#define VERIFY_CONTAINS(text, part) QVERIFY2(contains((text), (part)), ("no \"" + std::string(part) + "\" in: " + (text)).c_str())

// Words a customer must not read: the store's internals and the keys themselves.
void noInternalTerms(const std::string& text) {
  static const std::regex internal(
      R"(\b(keys?|generations?|leases?|idempotency|idempotent|ttl|tier|policy|fingerprint|trace|executed)\b|\bk_[a-z]+|acct_9|/v1/)",
      std::regex::icase);
  std::smatch m;
  QVERIFY2(!std::regex_search(text, m, internal), ("internal term \"" + m.str() + "\" in: " + text).c_str());
}

// The letter to a consumer, with the refund's timing.
explain::Letter consumerLetter(const explain::Explanation& x) {
  explain::LetterOptions o;
  o.to = explain::Addressee::Consumer;
  o.sender = "Acme Payments";
  o.refundTiming = "Refunds reach your account within 5-10 business days.";
  return explain::composeLetter(x, o);
}

// The letter's story has a line that says `part`.
bool tells(const explain::Letter& letter, const std::string& part) {
  return std::any_of(letter.timeline.begin(), letter.timeline.end(),
                     [&](const explain::Letter::Line& line) { return contains(line.text, part); });
}

explain::Explanation explainKey(pg::Connection& c, const std::string& key) {
  return explain::explain(explain::loadByKey(c, key));
}

}  // namespace

class TestCrossKey : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

  /// A policy whose route's fingerprint is /amount and /currency; its version.
  int fieldsPolicy() {
    auto c = m_db->connect();
    return static_cast<int>(c.exec("INSERT INTO idem.policies (sha256, document, source, effective_at) VALUES ('fields',"
                                " $1::jsonb, 'test', now() - interval '1 hour') RETURNING version",
                                {R"({"tiers":[{"name":"payments","routes":["POST /v1/payments"],"ttl":"24h",)"
                                 R"("fingerprint":{"mode":"fields","fields":["/amount","/currency"]}}]})"})
                                .integer(0, "version"));
  }

  /// A held repeat (k_held) of k_paid on that route.
  void makeHeldPair() {
    test::CrossKeyPairs(m_db->conninfo()).make("k_paid", "k_held", Outcome::DuplicateHeld, fieldsPolicy());
  }

 private slots:
  // Each case its own database: none depends on what another left.
  void init() { m_db = std::make_unique<test::TestDatabase>("explain_crosskey"); }
  void cleanup() { m_db.reset(); }

  // Observe: both ran. The later key names the earlier execution in support's words, its own
  // execution is the suspected duplicate, and the resolution refunds it unless the customer
  // meant two.
  void observedRepeatNamesTheEarlierExecution() {
    test::CrossKeyPairs(m_db->conninfo()).make("k_first", "k_again", Outcome::DuplicateObserved);
    auto c = m_db->connect();
    const auto x = explainKey(c, "k_again");
    QCOMPARE(x.crossKey.size(), std::size_t{1});
    const auto& f = x.crossKey.front();
    QVERIFY(f.thisKeyIsLater);
    QCOMPARE(f.earlierKey, std::string("k_first"));
    QCOMPARE(f.earlierResource.value_or(""), std::string("pay_k_first"));
    QCOMPARE(f.laterResource.value_or(""), std::string("pay_k_again"));
    QVERIFY(f.gap);
    QVERIFY2(*f.gap >= 40s && *f.gap < 41s, std::to_string(f.gap->count()).c_str());
    VERIFY_CONTAINS(x.narrative, "matches pay_k_first, 40 s earlier, same body, key k_first: a client that made a "
                                 "new key for its retry. Both ran (pay_k_again under this key)");
    VERIFY_CONTAINS(x.cause, "made a new key for its retry");
    const auto& r = x.resolution;
    QCOMPARE(r.executions.size(), std::size_t{1});
    QCOMPARE(r.executions[0].role, explain::ExecutionRole::SuspectedDuplicate);
    VERIFY_CONTAINS(r.executions[0].reason, "the same request as pay_k_first under key k_first, 40 s earlier");
    QCOMPARE(r.action, explain::Resolution::Action::Refund);
    QCOMPARE(r.duplicates, 1);
    VERIFY_CONTAINS(r.proposal, "Refund pay_k_again (key k_again, charged ");
    VERIFY_CONTAINS(r.proposal, "40 s after pay_k_first under key k_first, the same request) unless the customer "
                                "meant two; keep pay_k_first.");

    // The formats carry the pair.
    const json j = explain::toJson(x);
    const json& d = j["duplicates_across_keys"];
    QCOMPARE(d.size(), std::size_t{1});
    QCOMPARE(d[0]["this_key"].get<std::string>(), std::string("later"));
    QCOMPARE(d[0]["outcome"].get<std::string>(), std::string("duplicate_observed"));
    QCOMPARE(d[0]["earlier_key"].get<std::string>(), std::string("k_first"));
    QCOMPARE(d[0]["earlier_resource"].get<std::string>(), std::string("pay_k_first"));
    QCOMPARE(d[0]["later_resource"].get<std::string>(), std::string("pay_k_again"));
    QVERIFY(d[0]["gap_ms"].get<long long>() >= 40000 && d[0]["gap_ms"].get<long long>() < 41000);
    QCOMPARE(j["resolution"]["executions"][0]["role"].get<std::string>(), std::string("suspected_duplicate"));
    bool related = false;
    for (const auto& e : j["events"]) related = related || e["related_key"] == "k_first";
    QVERIFY2(related, j["events"].dump().c_str());
    VERIFY_CONTAINS(explain::toText(x), "Duplicates across keys:\n");
    VERIFY_CONTAINS(explain::toText(x), "k_again repeats k_first  suspected duplicate (executed)");
    VERIFY_CONTAINS(explain::toMarkdown(x), "| `k_again` | `k_first` | 40 s |");

    // The customer: charged twice, the later one refunded unless both were meant.
    const auto& cu = x.customer;
    QCOMPARE(cu.references, (std::vector<std::string>{"pay_k_first", "pay_k_again"}));
    VERIFY_CONTAINS(cu.summary, "Your request was processed twice: pay_k_first on ");
    VERIFY_CONTAINS(cu.summary, "pay_k_again is a duplicate.");
    QCOMPARE(cu.action, std::string("We will refund pay_k_again. If both were meant, tell us and we will keep both."));
    VERIFY_CONTAINS(cu.advice, "send a retry with the identifier of the first request");
    noInternalTerms(explain::toText(x, explain::Audience::Customer));

    // The letter, to a consumer: charged twice, refunded, in plain words.
    const auto letter = consumerLetter(x);
    VERIFY_CONTAINS(letter.title, ": charged twice");
    QCOMPARE(letter.action, std::string("We will refund pay_k_again. If you meant to pay twice, tell us and we will "
                                        "keep both. Refunds reach your account within 5-10 business days."));
    QVERIFY2(tells(letter, "The same payment was sent to us again, 40 s after the first one (pay_k_first), and it was "
                           "charged a second time (pay_k_again)."),
             explain::letterMarkdown(letter).c_str());
    QVERIFY(letter.advice.empty());
    noInternalTerms(explain::letterMarkdown(letter));
  }

  // The earlier key says that a later one repeated it, and proposes the same refund.
  void theEarlierKeyNamesTheLaterOne() {
    test::CrossKeyPairs(m_db->conninfo()).make("k_first", "k_again", Outcome::DuplicateObserved);
    auto c = m_db->connect();
    const auto x = explainKey(c, "k_first");
    QCOMPARE(x.crossKey.size(), std::size_t{1});
    QVERIFY(!x.crossKey.front().thisKeyIsLater);
    VERIFY_CONTAINS(x.narrative, "Key k_again sent the same request 40 s later (same body) and it ran too "
                                 "(pay_k_again): a suspected duplicate across keys");
    QCOMPARE(x.resolution.executions.size(), std::size_t{1});
    QCOMPARE(x.resolution.executions[0].role, explain::ExecutionRole::Intended);
    QCOMPARE(x.resolution.action, explain::Resolution::Action::Refund);
    VERIFY_CONTAINS(x.resolution.proposal, "Refund pay_k_again (key k_again");
    QCOMPARE(explain::toJson(x)["duplicates_across_keys"][0]["this_key"].get<std::string>(), std::string("earlier"));
    QCOMPARE(x.customer.references, (std::vector<std::string>{"pay_k_first", "pay_k_again"}));
    QCOMPARE(x.customer.action, std::string("We will refund pay_k_again. If both were meant, tell us and we will keep both."));
    noInternalTerms(explain::toText(x, explain::Audience::Customer));
  }

  // Hold: nothing ran twice; the held key stored no generation, only its trace row, and is
  // still found by its key. What "the same request" means follows the route's fingerprint.
  void heldRepeatSaysWhatTheClientDoes() {
    makeHeldPair();
    auto c = m_db->connect();
    const auto x = explainKey(c, "k_held");
    QVERIFY(x.history.generations.empty());
    QCOMPARE(x.crossKey.size(), std::size_t{1});
    VERIFY_CONTAINS(x.narrative, "matches pay_k_paid, 40 s earlier, same /amount and /currency, key k_paid");
    VERIFY_CONTAINS(x.narrative, "It was held (409, suspected duplicate): nothing ran twice. If the customer means a "
                                 "second charge, the client resends it with the header "
                                 "Idempotency-Duplicate-Confirmed: ?1.");
    QVERIFY2(!contains(x.narrative, "past its archive retention"), x.narrative.c_str());
    QCOMPARE(x.resolution.action, explain::Resolution::Action::None);
    VERIFY_CONTAINS(x.resolution.proposal, "Nothing ran twice: the repeat under key k_held was held and pay_k_paid "
                                           "(key k_paid) stands.");
    VERIFY_CONTAINS(x.customer.summary, "Your request was processed once: pay_k_paid on ");
    QCOMPARE(x.customer.action, std::string("Nothing needs to be done. If a second request was meant, send it again "
                                            "confirming that it is intended."));
    noInternalTerms(explain::toText(x, explain::Audience::Customer));

    // No refund promised, so no refund timing.
    const auto letter = consumerLetter(x);
    VERIFY_CONTAINS(letter.title, ": charged once, the repeat stopped");
    QCOMPARE(letter.action, std::string("Nothing needs to be done. If you meant to pay twice, please make the second "
                                        "payment again."));
    QVERIFY2(tells(letter, "we held it as a likely repeat and nothing was charged again."),
             explain::letterMarkdown(letter).c_str());
    noInternalTerms(explain::letterMarkdown(letter));

    const auto earlier = explainKey(c, "k_paid");
    VERIFY_CONTAINS(earlier.narrative, "Key k_held sent the same request 40 s later (same /amount and /currency); it "
                                       "was held (409) and did not run.");
    QCOMPARE(earlier.resolution.action, explain::Resolution::Action::None);
  }

  // Confirmed: the client said it meant two; refused: nothing ran, the window decides.
  void confirmedAndRefusedRepeats() {
    fieldsPolicy();
    test::CrossKeyPairs(m_db->conninfo()).make("k_one", "k_two", Outcome::DuplicateConfirmed);
    test::CrossKeyPairs(m_db->conninfo()).make("k_base", "k_refused", Outcome::DuplicateRejected);
    auto c = m_db->connect();
    const auto confirmed = explainKey(c, "k_two");
    // (the route's fields fingerprint, recorded by the test before, still says what "same" is)
    VERIFY_CONTAINS(confirmed.narrative, "matches pay_k_one, 40 s earlier, same /amount and /currency, key k_one. The "
                                         "client confirmed it meant a second one (Idempotency-Duplicate-Confirmed), so it "
                                         "ran (pay_k_two).");
    QCOMPARE(confirmed.resolution.action, explain::Resolution::Action::None);
    QCOMPARE(confirmed.resolution.executions[0].role, explain::ExecutionRole::Intended);
    VERIFY_CONTAINS(confirmed.resolution.proposal, "Nothing to refund for pay_k_two: the client confirmed it meant a "
                                                   "second charge after pay_k_one (key k_one).");
    VERIFY_CONTAINS(confirmed.customer.summary, "Your request was processed twice, as confirmed when it was sent again");
    VERIFY_CONTAINS(confirmed.customer.summary, "None of them is a duplicate.");
    QCOMPARE(confirmed.customer.action, std::string("Nothing needs to be done."));

    const auto refused = explainKey(c, "k_refused");
    VERIFY_CONTAINS(refused.narrative, "It was refused (409): nothing ran twice.");
    VERIFY_CONTAINS(refused.resolution.proposal, "the repeat under key k_refused was refused");
    const auto letter = explain::composeLetter(refused, {});
    VERIFY_CONTAINS(letter.title, ": charged once, the repeat stopped");
    noInternalTerms(explain::letterMarkdown(letter));
  }

  // The usual hold: the repeat is held, then the client resends it confirming it is meant.
  // The earlier charge is told once, the hold's advice is superseded, and nothing is refunded.
  void heldThenConfirmedIsTwoMeantCharges() {
    test::CrossKeyPairs pairs(m_db->conninfo());
    pairs.make("k_cart", "k_cart_b", Outcome::DuplicateHeld);
    pairs.repeat("k_cart", "k_cart_b", Outcome::DuplicateConfirmed);
    auto c = m_db->connect();
    const auto x = explainKey(c, "k_cart_b");
    QCOMPARE(x.crossKey.size(), std::size_t{2});
    QCOMPARE(x.resolution.action, explain::Resolution::Action::None);
    QCOMPARE(x.resolution.proposal, std::string("Nothing to refund for pay_k_cart_b: the client confirmed it meant a "
                                                "second charge after pay_k_cart (key k_cart)."));
    QCOMPARE(x.customer.references, (std::vector<std::string>{"pay_k_cart", "pay_k_cart_b"}));
    VERIFY_CONTAINS(x.customer.summary, "Your request was processed twice, as confirmed when it was sent again: "
                                        "pay_k_cart on ");
    QCOMPARE(x.customer.timeline.size(), std::size_t{3});  // the first charge, the hold, the confirmed one
    QVERIFY2(x.customer.advice.empty(), x.customer.advice.c_str());
    QVERIFY(!contains(consumerLetter(x).title, "charged"));
  }

  // `idemctl explain` finds a held key by its key alone (it has no generation) and prints the pair.
  void idemctlExplainsAHeldKey() {
    makeHeldPair();
    std::string out;
    const int rc = test::runIdemctl({"explain", "--db", m_db->conninfo(), "--key", "k_held", "--format", "json"}, &out);
    QVERIFY2(rc == 0, out.c_str());
    const json j = json::parse(out.substr(out.find('{')));
    QCOMPARE(j["duplicates_across_keys"][0]["outcome"].get<std::string>(), std::string("duplicate_held"));
    QCOMPARE(j["duplicates_across_keys"][0]["earlier_resource"].get<std::string>(), std::string("pay_k_paid"));
  }
};

QTEST_GUILESS_MAIN(TestCrossKey)
#include "tst_crosskey.moc"
