// The SQL baselines, run by pgbench itself so they cost what a tuned client would pay.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <unistd.h>
#include <vector>

#include "app/idemctl/bench.h"
#include "core/cluster/localcluster.h"
#include "core/store/keysql.h"
#include "core/store/pg.h"

namespace idemctl::bench {
namespace {

// The seed article's table, verbatim in shape.
constexpr const char* kSeedTable = R"sql(
CREATE SCHEMA IF NOT EXISTS idem_bench;
DROP TABLE IF EXISTS idem_bench.seed_keys;
CREATE TABLE idem_bench.seed_keys (
    idem_key    text        NOT NULL,
    scope       text        NOT NULL,
    params_hash bytea       NOT NULL,
    state       text        NOT NULL,
    resp_status int,
    resp_body   bytea,
    resp_ctype  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (scope, idem_key)
);
CREATE INDEX ON idem_bench.seed_keys (expires_at) WHERE state = 'done';
)sql";

/// One of the library's statements with its $n placeholders replaced by SQL (literals or
/// pgbench variables), highest number first so that $1 does not eat into $10. Unterminated:
/// the caller ends it with ";" or with pgbench's \gset.
std::string withArguments(std::string sql, const std::vector<std::string>& args) {
  for (std::size_t n = args.size(); n >= 1; --n) {
    const std::string placeholder = "$" + std::to_string(n);
    for (auto at = sql.find(placeholder); at != std::string::npos; at = sql.find(placeholder, at + args[n - 1].size()))
      sql.replace(at, placeholder.size(), args[n - 1]);
  }
  return sql;
}

/// A new key the way KeyStore sends it to a process that has not seen the key: the fresh claim,
/// then the completion. Without the execution's trace row, which the library writes in the
/// trace writer's batches.
std::string idemNewScript() {
  namespace sql = idem::store::sql;
  const std::string key = "('srv-' || :k)";
  const std::string fp = "'\\x" + benchFingerprintHex() + "'::bytea";
  return "\\set k random(1000000000, 9000000000000000000)\n" +
         withArguments(sql::kFreshClaimSql, {"'bench'", "'POST /v1/payments'", key, fp, "'payments'", "NULL",
                                             "'24 hours'", "'30 seconds'", "'req_bench'", "'default'", "NULL"}) +
         " \\gset\n" +
         withArguments(sql::kCompleteSql, {"'bench'", "'POST /v1/payments'", key, ":lease_token",
                                           "201", "'[[\"Content-Type\", \"application/json\"]]'",
                                           "'\\x7b7d'", "NULL", "'default'"}) +
         ";\n";
}

/// `keys` new keys the way KeyBatches sends a batch of them: one fresh-claim statement for all
/// (core/store/keysql.h kFreshClaimBatchSql), then one completion statement for all — each its
/// own commit. The claim's returned rows are folded into two arrays so that pgbench can hand
/// them to the completion (its \gset takes one row). One key: the single-key statements.
std::string idemBatchScript(int keys) {
  if (keys <= 1) return idemNewScript();
  namespace sql = idem::store::sql;
  const std::string n = std::to_string(keys);
  const auto each = [&](const std::string& value) { return "array_fill(" + value + ", ARRAY[" + n + "])"; };
  const std::string names = "ARRAY(SELECT 'srv-' || (:k::bigint + g) FROM generate_series(1, " + n + ") g)";
  const std::string fp = "'\\x" + benchFingerprintHex() + "'::bytea";
  return "\\set k random(1000000000, 9000000000000000000)\n"
         "WITH claimed AS (" +
         withArguments(sql::kFreshClaimBatchSql,
                       {each("'bench'::text"), each("'POST /v1/payments'::text"), names, each(fp),
                        each("'payments'::text"), each("NULL::integer"), each("'24 hours'::interval"),
                        each("'30 seconds'::interval"), each("'req_bench'::text"), each("'default'::text"),
                        each("NULL::boolean")}) +
         ") SELECT array_agg(idem_key ORDER BY idem_key) AS keys, array_agg(lease_token ORDER BY idem_key) AS tokens "
         "FROM claimed \\gset\n" +
         withArguments(sql::kCompleteBatchSql,
                       {each("'bench'::text"), each("'POST /v1/payments'::text"), ":keys::text[]", ":tokens::uuid[]",
                        each("201"), each("'[[\"Content-Type\", \"application/json\"]]'::jsonb"),
                        each("'\\x7b7d'::bytea"), each("NULL::text"), each("'default'::text")}) +
         ";\n";
}

std::string idemReplayScript(int preloaded) {
  return "\\set k random(0, " + std::to_string(preloaded - 1) + ")\n" +
         withArguments(idem::store::sql::kReplaySql, {"'bench'", "'POST /v1/payments'", "('bench-replay-' || :k)",
                                                      "'\\x" + benchFingerprintHex() + "'::bytea", "'default'"}) +
         ";\n";
}

std::string scriptText(Script script, int preloaded) {
  const std::string n = std::to_string(preloaded);
  switch (script) {
    case Script::MinimalNew:
      return "\\set k random(1000000000, 9000000000000000000)\n"
             "INSERT INTO idem_bench.seed_keys (idem_key, scope, params_hash, state, expires_at) VALUES "
             "(:k::text, 'POST /v1/payments', '\\x00', 'processing', now() + interval '24 hours') "
             "ON CONFLICT DO NOTHING;\n"
             "UPDATE idem_bench.seed_keys SET state = 'done', resp_status = 201, resp_body = '\\x7b7d', "
             "resp_ctype = 'application/json' WHERE scope = 'POST /v1/payments' AND idem_key = :k::text;\n";
    case Script::MinimalReplay:
      return "\\set k random(1, " + n +
             ")\n"
             "SELECT * FROM idem_bench.seed_keys WHERE scope = 'POST /v1/payments' AND idem_key = :k::text;\n";
    case Script::MinimalReplayOneKey:
      return "SELECT * FROM idem_bench.seed_keys WHERE scope = 'POST /v1/payments' AND idem_key = '1';\n";
    case Script::SeedReplay:
      return "\\set k random(1, " + n +
             ")\n"
             "BEGIN;\n"
             "INSERT INTO idem_bench.seed_keys (idem_key, scope, params_hash, state, expires_at) VALUES "
             "(:k::text, 'POST /v1/payments', '\\x00', 'processing', now() + interval '24 hours') "
             "ON CONFLICT DO NOTHING;\n"
             "SELECT params_hash, state, resp_status, resp_body, resp_ctype FROM idem_bench.seed_keys "
             "WHERE scope = 'POST /v1/payments' AND idem_key = :k::text;\n"
             "COMMIT;\n";
    case Script::SeedNew:
      return "\\set k random(1000000000, 9000000000000000000)\n"
             "BEGIN;\n"
             "INSERT INTO idem_bench.seed_keys (idem_key, scope, params_hash, state, expires_at) VALUES "
             "(:k::text, 'POST /v1/payments', '\\x00', 'processing', now() + interval '24 hours') "
             "ON CONFLICT DO NOTHING;\n"
             "SELECT params_hash, state FROM idem_bench.seed_keys "
             "WHERE scope = 'POST /v1/payments' AND idem_key = :k::text;\n"
             "COMMIT;\n"
             "UPDATE idem_bench.seed_keys SET state = 'done', resp_status = 201, resp_body = '\\x7b7d' "
             "WHERE scope = 'POST /v1/payments' AND idem_key = :k::text;\n";
    case Script::IdemNew:
      return idemNewScript();
    case Script::IdemReplay:
      return idemReplayScript(preloaded);
  }
  return {};
}

std::string pgbenchBinary() {
  std::string fromServer = idem::cluster::LocalCluster::binDir() + "/pgbench";
  return access(fromServer.c_str(), X_OK) == 0 ? fromServer : "/usr/bin/pgbench";
}

}  // namespace

void prepareSeedTable(const Settings& s) {
  idem::pg::Connection c(s.conninfo);
  c.script(kSeedTable);
  c.exec("INSERT INTO idem_bench.seed_keys (idem_key, scope, params_hash, state, resp_status, resp_body, "
         "resp_ctype, expires_at) SELECT g::text, 'POST /v1/payments', '\\x00', 'done', 201, "
         "convert_to('{\"id\":\"pay_' || g || '\",\"amount\":1000,\"currency\":\"usd\",\"status\":\"succeeded\"}', "
         "'UTF8'), 'application/json', now() + interval '24 hours' FROM generate_series(1, $1) g",
         {s.preloaded});
  c.exec("ANALYZE idem_bench.seed_keys");
}

double pgbench(const Settings& s, Script script, int clients, Protocol protocol) {
  return pgbenchRun(s, script, clients, protocol).rate();
}

Run pgbenchRun(const Settings& s, Script script, int clients, Protocol protocol) {
  return pgbenchScriptRun(s, scriptText(script, s.preloaded), clients, protocol);
}

Run pgbenchIdemBatchRun(const Settings& s, int clients, int keysPerStatement) {
  Run run = pgbenchScriptRun(s, idemBatchScript(keysPerStatement), clients, Protocol::Prepared);
  run.operations *= keysPerStatement;  // a transaction of the script is that many new keys
  return run;
}

Run pgbenchScriptRun(const Settings& s, const std::string& script, int clients, Protocol protocol) {
  char path[] = "/tmp/idem-pgbench-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("cannot create a pgbench script file");
  close(fd);
  {
    std::ofstream out(path);
    out << script;
  }
  std::string output;
  const std::string c = std::to_string(clients);
  int rc = idem::cluster::runProgram({pgbenchBinary(), "-n", "-M", protocol == Protocol::Prepared ? "prepared" : "simple", "-c", c, "-j", c, "-T",
                                      std::to_string(s.seconds), "-f", path, s.conninfo},
                                     &output, false);
  std::remove(path);
  std::smatch m, n;
  static const std::regex tps(R"(tps = ([0-9.]+) \(without initial connection time\))");
  static const std::regex processed(R"(number of transactions actually processed: ([0-9]+))");
  if (rc != 0 || !std::regex_search(output, m, tps) || !std::regex_search(output, n, processed))
    throw std::runtime_error("pgbench failed: " + output);
  // The run time pgbench measured, from its own figures: tps = processed / time.
  const auto transactions = std::stoll(n[1].str());
  const double rate = std::stod(m[1].str());
  return {transactions, rate > 0 ? static_cast<double>(transactions) / rate : 0};
}

}  // namespace idemctl::bench
