#include "app/idemctl/bench_report.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace idemctl::bench {
namespace {

[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n > 0) out.append(buffer, static_cast<std::size_t>(std::min<int>(n, sizeof buffer - 1)));
}

// ---- text ----

void textRow(std::string& out, const char* label, const Pair& p) {
  appendf(out, "%-8s %-30s %12.0f %12.0f\n", "", label, p.newPerS, p.replayPerS);
}

void textRatio(std::string& out, const char* label, double newRatio, double replayRatio) {
  appendf(out, "%-8s %-30s %11.2fx %11.2fx\n", "", label, newRatio, replayRatio);
}

// ---- JSON ----

nlohmann::json perSecond(const Pair& p) { return {{"new_per_s", p.newPerS}, {"replay_per_s", p.replayPerS}}; }

nlohmann::json ratiosAgainst(const Row& r, const Pair& minimal, const Pair& seed) {
  return {{"new_vs_minimal", r.library.newPerS / minimal.newPerS},
          {"replay_vs_minimal", r.library.replayPerS / minimal.replayPerS},
          {"replay_vs_seed", r.library.replayPerS / seed.replayPerS},
          {"new_vs_seed", r.library.newPerS / seed.newPerS}};
}

nlohmann::json rowJson(const Row& r) {
  nlohmann::json ratios = ratiosAgainst(r, r.minimal, r.seed);
  ratios["replay_trace_off_vs_minimal"] = r.libReplayUntraced / r.minimal.replayPerS;
  ratios["one_key_replay_vs_minimal"] = r.libReplayOneKey / r.minimalReplayOneKey;
  ratios["replay_unseen_vs_minimal"] = r.libReplayUnseen / r.minimal.replayPerS;
  nlohmann::json prepared = ratiosAgainst(r, r.minimalPrepared, r.seedPrepared);
  prepared["replay_trace_off_vs_minimal"] = r.libReplayUntraced / r.minimalPrepared.replayPerS;
  prepared["replay_unseen_vs_minimal"] = r.libReplayUnseen / r.minimalPrepared.replayPerS;
  prepared["idem_sql_new_vs_minimal"] = r.idemSql.newPerS / r.minimalPrepared.newPerS;
  prepared["idem_sql_replay_vs_minimal"] = r.idemSql.replayPerS / r.minimalPrepared.replayPerS;
  return {{"clients", r.clients},
          {"library", perSecond(r.library)},
          {"library_trace_off", {{"replay_per_s", r.libReplayUntraced}}},
          {"library_unseen_keys", {{"replay_per_s", r.libReplayUnseen}}},
          {"pgbench_minimal", perSecond(r.minimal)},
          {"pgbench_seed", perSecond(r.seed)},
          {"pgbench_minimal_prepared", perSecond(r.minimalPrepared)},
          {"pgbench_seed_prepared", perSecond(r.seedPrepared)},
          {"pgbench_idem_sql_prepared", perSecond(r.idemSql)},
          {"one_key_storm",
           {{"library_replay_per_s", r.libReplayOneKey}, {"pgbench_minimal_replay_per_s", r.minimalReplayOneKey}}},
          {"ratios", ratios},
          {"ratios_prepared", prepared}};
}

// ---- Markdown ----

/// 40307.4 -> "40 307": the README groups digits so the figures can be read at a glance.
std::string grouped(double perSecond) {
  std::string digits = std::to_string(std::llround(perSecond));
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0 && digits[i - 1] != '-'; i -= 3)
    digits.insert(static_cast<std::size_t>(i), " ");
  return digits;
}

std::string times(double ratio) {
  std::string out;
  appendf(out, "%.2f×", ratio);
  return out;
}

void mdRow(std::string& out, const std::string& clients, const std::string& label, const std::string& newCell,
           const std::string& replayCell) {
  // An empty cell is "| |", as the README writes it by hand.
  for (const std::string* cell : {&clients, &label, &newCell, &replayCell})
    out += cell->empty() ? "| " : "| " + *cell + " ";
  out += "|\n";
}

void mdFigures(std::string& out, const std::string& label, const Pair& p) {
  mdRow(out, "", label, grouped(p.newPerS), grouped(p.replayPerS));
}

void mdRatios(std::string& out, const std::string& label, double newRatio, double replayRatio) {
  mdRow(out, "", label, times(newRatio), times(replayRatio));
}

std::string italic(const std::string& s) { return "*" + s + "*"; }
std::string bold(const std::string& s) { return "**" + s + "**"; }

}  // namespace

std::string reportText(const std::vector<Row>& rows) {
  std::string out;
  appendf(out, "%-8s %-30s %12s %12s\n", "clients", "", "new keys/s", "replays/s");
  for (const auto& r : rows) {
    appendf(out, "%-8d %-30s %12.0f %12.0f\n", r.clients, "library (Idem)", r.library.newPerS, r.library.replayPerS);
    textRow(out, "pgbench minimal SQL", r.minimal);
    textRow(out, "pgbench seed design", r.seed);
    textRatio(out, "library / minimal", r.library.newPerS / r.minimal.newPerS,
              r.library.replayPerS / r.minimal.replayPerS);
    textRatio(out, "library / seed", r.library.newPerS / r.seed.newPerS, r.library.replayPerS / r.seed.replayPerS);
    appendf(out, "%-8s the same SQL sent by pgbench -M prepared (parsed once, as the library sends its own):\n", "");
    textRow(out, "pgbench minimal SQL, prepared", r.minimalPrepared);
    textRow(out, "pgbench seed design, prepared", r.seedPrepared);
    textRatio(out, "library / minimal, prepared", r.library.newPerS / r.minimalPrepared.newPerS,
              r.library.replayPerS / r.minimalPrepared.replayPerS);
    textRatio(out, "library / seed, prepared", r.library.newPerS / r.seedPrepared.newPerS,
              r.library.replayPerS / r.seedPrepared.replayPerS);
    appendf(out, "%-8s diagnostics:\n", "");
    appendf(out, "%-8s %-30s %12s %12.0f  (what the trace costs)\n", "", "library, trace off", "",
            r.libReplayUntraced);
    appendf(out,
            "%-8s %-30s %12s %12.0f  (keys another process decided, a storm of them: read first once "
            "learned, %.2fx)\n",
            "",
            "library, keys new to process", "", r.libReplayUnseen, r.libReplayUnseen / r.minimal.replayPerS);
    textRow(out, "pgbench Idem's SQL, prepared", r.idemSql);
    textRatio(out, "Idem's SQL / minimal, prepared", r.idemSql.newPerS / r.minimalPrepared.newPerS,
              r.idemSql.replayPerS / r.minimalPrepared.replayPerS);
    appendf(out, "%-8s %-30s %12s %12.0f  (every client replays one key; pgbench minimal %.0f, %.2fx)\n", "",
            "library, one hot key", "", r.libReplayOneKey, r.minimalReplayOneKey,
            r.libReplayOneKey / r.minimalReplayOneKey);
  }
  return out;
}

std::string reportJson(const std::vector<Row>& rows, int secondsPerFigure) {
  nlohmann::json out{{"seconds_per_figure", secondsPerFigure}, {"runs", nlohmann::json::array()}};
  for (const auto& r : rows) out["runs"].push_back(rowJson(r));
  if (!rows.empty()) {
    const nlohmann::json last = rowJson(rows.back());
    out["ratios"] = last["ratios"];
    out["ratios_prepared"] = last["ratios_prepared"];
  }
  return out.dump(2) + '\n';
}

std::string reportMarkdown(const std::vector<Row>& rows) {
  std::string out = "| clients | | new keys/s | replays/s |\n|---|---|---:|---:|\n";
  for (const auto& r : rows) {
    mdRow(out, std::to_string(r.clients), "library (Idem)", grouped(r.library.newPerS),
          grouped(r.library.replayPerS));
    mdFigures(out, "pgbench minimal SQL (default protocol)", r.minimal);
    mdFigures(out, "pgbench seed design (default protocol)", r.seed);
    mdRow(out, "", bold("library / minimal"), bold(times(r.library.newPerS / r.minimal.newPerS)),
          bold(times(r.library.replayPerS / r.minimal.replayPerS)));
    mdRatios(out, "library / seed", r.library.newPerS / r.seed.newPerS, r.library.replayPerS / r.seed.replayPerS);
    mdFigures(out, "pgbench minimal SQL, `-M prepared`", r.minimalPrepared);
    mdFigures(out, "pgbench seed design, `-M prepared`", r.seedPrepared);
    mdRatios(out, "library / minimal, prepared", r.library.newPerS / r.minimalPrepared.newPerS,
             r.library.replayPerS / r.minimalPrepared.replayPerS);
    mdRatios(out, "library / seed, prepared", r.library.newPerS / r.seedPrepared.newPerS,
             r.library.replayPerS / r.seedPrepared.replayPerS);
    mdRow(out, "", italic("library, trace off"), "",
          italic(grouped(r.libReplayUntraced) + " (" + times(r.libReplayUntraced / r.minimalPrepared.replayPerS) +
                 " prepared)"));
    mdRow(out, "", italic("library, keys new to this process (a storm of them: read first once learned)"), "",
          italic(grouped(r.libReplayUnseen) + " (" + times(r.libReplayUnseen / r.minimal.replayPerS) + " default)"));
    mdRow(out, "", italic("pgbench, Idem's SQL (prepared)"),
          italic(grouped(r.idemSql.newPerS) + " (" + times(r.idemSql.newPerS / r.minimalPrepared.newPerS) + ")"),
          italic(grouped(r.idemSql.replayPerS) + " (" + times(r.idemSql.replayPerS / r.minimalPrepared.replayPerS) +
                 ")"));
    mdRow(out, "", italic("one hot key (retry storm): library vs pgbench minimal (default)"), "",
          italic(grouped(r.libReplayOneKey) + " vs " + grouped(r.minimalReplayOneKey) + " (" +
                 times(r.libReplayOneKey / r.minimalReplayOneKey) + ")"));
  }
  return out;
}

}  // namespace idemctl::bench
