#include "core/sim/compare.h"

#include <algorithm>
#include <sstream>

#include "core/sim/report.h"
#include "core/sim/verdict.h"
#include "core/text/numbers.h"

namespace idem::sim {
namespace {

using text::fixed;
using text::withThousands;

std::string shortVerdict(Exposure e) {
  switch (e) {
    case Exposure::ChargedTwice: return "CHARGES TWICE";
    case Exposure::CanChargeTwice: return "can charge twice";
    case Exposure::CannotChargeTwice: return "cannot charge twice";
  }
  return {};
}

struct Row {
  std::string label;
  std::vector<std::string> cells;
};

std::vector<Row> rowsFor(const std::vector<NamedResult>& runs) {
  std::vector<Row> rows{{"", {}},
                        {"verdict", {}},
                        {"duplicates", {}},
                        {"  per million", {}},
                        {"  under a new key", {}},
                        {"retry horizon", {}},
                        {"TTL + purge lag", {}},
                        {"attempts", {}},
                        {"amplification", {}},
                        {"success", {}},
                        {"failed", {}},
                        {"max queue wait", {}},
                        {"recovery", {}}};
  for (const auto& [name, r] : runs) {
    const int failed = static_cast<int>(r.failures.retriesExhausted + r.failures.notRetryable + r.failures.deadline +
                                        r.failures.budget);
    const std::string recovery =
        !r.recovery ? "-"
                    : r.recovery->recoveredAfterS ? "after " + humanSeconds(*r.recovery->recoveredAfterS) : "never";
    const std::vector<std::string> cells{
        name,
        shortVerdict(verdictOf(r).exposure),
        withThousands(r.duplicates),
        fixed(r.duplicatesPerMillion(), 1),
        withThousands(r.duplicatesNewKey),
        r.horizon.value ? humanSeconds(toSeconds(*r.horizon.value)) : std::string("unbounded"),
        humanSeconds(toSeconds(r.config.store.ttl + r.config.store.purgeLag)),
        withThousands(r.attempts),
        fixed(r.amplification(), 3),
        fixed(100 * r.successRate(), 2) + " %",
        withThousands(failed),
        r.maxQueueWait > 0 ? humanSeconds(toSeconds(r.maxQueueWait)) : std::string("-"),
        recovery};
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].cells.push_back(cells[i]);
  }
  // Only a scenario with a cause across keys gets the detection rows.
  const bool counterparts = std::any_of(runs.begin(), runs.end(), [](const NamedResult& n) { return n.result.counterpart; });
  if (!counterparts) return rows;
  Row other{"", {}};
  Row held{"  held or rejected", {}};
  Row meant{"  meant, never ran", {}};
  for (const auto& [name, r] : runs) {
    const bool detecting = r.counterpart && r.counterpart->mode == CrossKey::Mode::Off;
    other.label = detecting ? "without detection" : "with detection";
    other.cells.push_back(r.counterpart ? withThousands(r.counterpart->duplicates) : std::string("-"));
    held.cells.push_back(withThousands(r.crossKey.held + r.crossKey.rejected));
    meant.cells.push_back(withThousands(r.crossKey.legitimateRefused));
  }
  rows.insert(rows.begin() + 5, {std::move(other), std::move(held), std::move(meant)});
  return rows;
}

}  // namespace

std::string comparisonText(const std::vector<NamedResult>& runs) {
  std::ostringstream out;
  for (const auto& [name, r] : runs) out << name << ": " << verdictLine(r) << '\n';
  out << '\n';
  const auto rows = rowsFor(runs);
  std::size_t labelWidth = 0;
  std::vector<std::size_t> widths(runs.size(), 0);
  for (const auto& row : rows) {
    labelWidth = std::max(labelWidth, row.label.size());
    for (std::size_t i = 0; i < row.cells.size(); ++i) widths[i] = std::max(widths[i], row.cells[i].size());
  }
  for (const auto& row : rows) {
    std::string line = "  " + row.label + std::string(labelWidth - row.label.size(), ' ');
    for (std::size_t i = 0; i < row.cells.size(); ++i)
      line += "   " + std::string(widths[i] - row.cells[i].size(), ' ') + row.cells[i];
    out << line << '\n';
  }
  return out.str();
}

nlohmann::ordered_json comparisonJson(const std::vector<NamedResult>& runs) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [name, r] : runs) {
    nlohmann::ordered_json run;
    run["name"] = name;
    run["verdict"] = verdictLine(r);
    run["result"] = toJson(r);
    list.push_back(std::move(run));
  }
  nlohmann::ordered_json j;
  j["runs"] = std::move(list);
  return j;
}

}  // namespace idem::sim
