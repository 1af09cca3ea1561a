// What each execution charged: read from its generation's stored response, at the path the
// policy in force when it ran names for the key's route — the policy of that generation, not
// today's, since the response was written under it.
#include "core/explain/resolve.h"
#include "core/policy/policy.h"

namespace idem::explain {

void readAmount(const KeyHistory& h, Execution& e) {
  const Generation* g = nullptr;
  for (const auto& candidate : h.generations)
    if (candidate.number == e.generation) g = &candidate;
  if (g == nullptr || !g->policy || !g->policy->tier.is_object() || !g->policy->tier.contains("amount")) return;
  const std::string source = "policy v" + std::to_string(g->policy->version);
  policy::AmountPaths paths;
  try {
    paths = policy::parseAmountPaths(g->policy->tier.at("amount"), source, "amount");
  } catch (const policy::PolicyError& error) {
    e.amountProblem = error.what();
    return;
  }
  const policy::AmountSpec* spec = paths.forRoute(h.scope.endpoint);
  if (spec == nullptr) return;
  if (g->bodyDropped) {
    e.amountProblem = "the stored response body was dropped (body_retention)";
    return;
  }
  policy::AmountReading reading = policy::readAmount(*spec, g->body);
  e.amount = std::move(reading.money);
  e.amountProblem = std::move(reading.problem);
}

}  // namespace idem::explain
