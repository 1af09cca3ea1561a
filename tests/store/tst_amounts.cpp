// Each charge's amount against a real store, as `idemctl explain` loads a key (loadByKey): read
// from each generation's stored response at the path the policy in force for that generation
// names — not today's policy — and said in the customer's words and the letter; a dropped body
// or a response without the field says why the amount is unknown.
#include <QtTest>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/letter.h"
#include "core/explain/loader.h"
#include "tests/support/testdb.h"

using namespace idem;

namespace {

// Generation 1 under policy A (amount in cents at /amount), generation 2 under policy B (major
// units at /total/value, currency fixed): the same key, charged twice after expiry.
void craft(pg::Connection& c) {
  auto policy = [&](const char* sha, const char* amount, const char* at) {
    return c
        .exec("INSERT INTO idem.policies (sha256, document, source, effective_at) VALUES ($1, $2::jsonb, 'p.json',"
              " $3::timestamptz) RETURNING version",
              {sha,
               std::string(R"({"tiers":[{"name":"payments","routes":["POST /v1/payments"],"ttl":"24h","amount":)") +
                   amount + "}]}",
               at})
        .str(0, "version");
  };
  const std::string a = policy("amount-a", R"({"value":"/amount","currency":"/currency","minor_units":true})",
                               "2026-01-01T00:00:00Z");
  const std::string b = policy("amount-b", R"({"value":"/total/value","default_currency":"EUR","minor_units":false})",
                               "2026-03-03T00:00:00Z");
  c.exec("INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint,"
         "   state, resp_status, resp_body, resource_ref, request_id, created_at, completed_at, expires_at, archived_at,"
         "   archived_by, purge_after)"
         " VALUES ('acct_9', 'POST /v1/payments', 'k_amount', 1, 'payments', $1::integer, '\\xaabb'::bytea, 'done',"
         "   201, convert_to('{\"id\":\"pay_a\",\"amount\":249900,\"currency\":\"usd\"}', 'UTF8'), 'pay_a', 'req_1',"
         "   '2026-03-02T10:00:00Z', '2026-03-02T10:00:00.1Z', '2026-03-03T10:00:00Z', '2026-03-03T10:05:00Z',"
         "   'sweeper', '2027-04-07T10:05:00Z')",
         {a});
  c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,"
         "   resp_status, resp_body, resource_ref, request_id, created_at, completed_at, expires_at)"
         " VALUES ('acct_9', 'POST /v1/payments', 'k_amount', 2, 'payments', $1::integer, '\\xaabb'::bytea, 'done',"
         "   201, convert_to('{\"id\":\"pay_b\",\"total\":{\"value\":\"2499.00\"}}', 'UTF8'), 'pay_b', 'req_2',"
         "   '2026-03-03T10:32:00Z', '2026-03-03T10:32:00.1Z', '2026-03-04T10:32:00Z')",
         {b});
  const char* event =
      "INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, status, request_id)"
      " VALUES ($1::timestamptz, 'acct_9', 'POST /v1/payments', 'k_amount', $2::integer, 'payments', $3, 201, $4)";
  c.exec(event, {"2026-03-02T10:00:00.1Z", 1, "executed", "req_1"});
  c.exec(event, {"2026-03-03T10:32:00.1Z", 2, "executed_after_expiry", "req_2"});
  // A key whose stored body lacks the field the policy names.
  c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,"
         "   resp_status, resp_body, resource_ref, request_id, created_at, completed_at, expires_at)"
         " VALUES ('acct_9', 'POST /v1/payments', 'k_nofield', 1, 'payments', $1::integer, '\\x01'::bytea, 'done',"
         "   201, convert_to('{\"id\":\"pay_c\"}', 'UTF8'), 'pay_c', 'req_3',"
         "   '2026-03-02T09:00:00Z', '2026-03-02T09:00:00.1Z', '2026-03-03T09:00:00Z')",
         {a});
}

}  // namespace

class TestAmounts : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("explain_amounts");
    auto c = m_db->connect();
    craft(c);
  }

  void eachChargeIsReadUnderItsOwnPolicy() {
    auto c = m_db->connect();
    const auto x = explain::explain(explain::loadByKey(c, "k_amount"));
    QCOMPARE(x.resolution.executions.size(), std::size_t(2));
    const auto& first = x.resolution.executions[0];
    const auto& second = x.resolution.executions[1];
    QVERIFY2(first.amount, first.amountProblem.c_str());
    QVERIFY2(second.amount, second.amountProblem.c_str());
    QCOMPARE(policy::formatMoney(*first.amount), std::string("$2,499.00"));
    QCOMPARE(policy::formatMoney(*second.amount), std::string("€2,499.00"));
    // The JSON lists it per execution, exact.
    const auto j = explain::toJson(x);
    QCOMPARE(j["resolution"]["executions"][0]["amount"]["value"].get<std::string>(), std::string("2499.00"));
    QCOMPARE(j["resolution"]["executions"][1]["amount"]["currency"].get<std::string>(), std::string("EUR"));
    // Support's proposal names it too.
    QVERIFY2(x.resolution.proposal.starts_with("Refund pay_b of €2,499.00 (generation 2"), x.resolution.proposal.c_str());
    QVERIFY2(x.resolution.proposal.find("Keep pay_a of $2,499.00 (generation 1") != std::string::npos,
             x.resolution.proposal.c_str());
    // The customer's words and the letter name it.
    QVERIFY2(x.customer.action == "We will refund pay_b (€2,499.00).", x.customer.action.c_str());
    explain::LetterOptions o;
    o.to = explain::Addressee::Consumer;
    o.sender = "Acme Shop";
    o.ticket = "SUP-1";
    o.refundTiming = "It takes 3 days.";
    o.date = *explain::parseIsoUtc("2026-03-05T12:00:00Z");
    const std::string md = explain::letterMarkdown(explain::composeLetter(x, o));
    for (const char* wanted : {"**Acme Shop**", "5 Mar 2026", "Ticket SUP-1", "Your payment of $2,499.00 on 2 Mar 2026",
                               "charged twice", "We will refund pay\\_b (€2,499.00). It takes 3 days.", "Dear customer,"})
      QVERIFY2(md.find(wanted) != std::string::npos, (std::string(wanted) + " not in:\n" + md).c_str());
    QVERIFY2(md.find("Your system") == std::string::npos, md.c_str());
  }

  void aResponseWithoutTheFieldSaysWhy() {
    auto c = m_db->connect();
    const auto x = explain::explain(explain::loadByKey(c, "k_nofield"));
    QCOMPARE(x.resolution.executions.size(), std::size_t(1));
    QVERIFY(!x.resolution.executions[0].amount);
    QCOMPARE(x.resolution.executions[0].amountProblem, std::string("the response has no /amount"));
    QVERIFY(explain::toText(x).find("amount unknown: the response has no /amount") != std::string::npos);
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestAmounts)
#include "tst_amounts.moc"
