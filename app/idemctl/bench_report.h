#pragma once
// idemctl bench's figures and the three ways it prints them: text for a terminal, JSON for
// tools (a stable contract, checked by tests/store/tst_bench_cli.cpp) and the Markdown table
// the README records, so the README's table is a paste of one run rather than a retyping.
#include <string>
#include <vector>

namespace idemctl::bench {

/// New keys/s and replays/s of one contender.
struct Pair {
  double newPerS = 0, replayPerS = 0;
};

/// Everything measured at one client count.
struct Row {
  int clients = 0;
  Pair library, minimal, seed;         // the headline: pgbench in its default protocol
  Pair minimalPrepared, seedPrepared;  // the same SQL with pgbench -M prepared (stricter)
  Pair idemSql;                        // the library's own statements run by pgbench, prepared
  double libReplayUntraced = 0;
  double libReplayUnseen = 0;  // keys another process decided: claimed first until the order is learned
  double libReplayOneKey = 0, minimalReplayOneKey = 0;  // a retry storm: every client on one key
};

[[nodiscard]] std::string reportText(const std::vector<Row>& rows);
/// `ratios` and `ratios_prepared` at the top level are the last row's (8 clients: the targets').
[[nodiscard]] std::string reportJson(const std::vector<Row>& rows, int secondsPerFigure);
/// The README's table: figures grouped by thousands with a space ("40 307"), ratios "0.97×".
[[nodiscard]] std::string reportMarkdown(const std::vector<Row>& rows);

}  // namespace idemctl::bench
