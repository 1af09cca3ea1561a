#include "core/enforce/durabilitygate.h"

namespace idem::enforce {

std::string durabilityShortfall(const policy::Tier& tier, const store::Durability& d) {
  if (tier.durability != policy::DurabilityNeed::Synchronous || d.synchronous()) return {};
  return "tier " + tier.name + " requires synchronous durability and the store does not give it (" +
         store::levelName(d.level) + "): " + d.meaning();
}

std::optional<Response> DurabilityGate::check(const policy::Tier& tier, const std::string& docsUrl) {
  if (tier.durability != policy::DurabilityNeed::Synchronous) return std::nullopt;
  const auto d = m_watch.current();
  const std::string shortfall = d ? durabilityShortfall(tier, *d) : std::string();
  const bool refuse = !shortfall.empty() && tier.onWeakerStore == policy::OnWeakerStore::Refuse;
  {
    std::lock_guard lock(m_mutex);
    auto& counts = m_counts[tier.name];
    if (!shortfall.empty()) ++(refuse ? counts.refused : counts.servedWeaker);
    // Said once per change, not once per request.
    if (auto& said = m_lastSaid[tier.name]; said != shortfall) {
      if (!shortfall.empty())
        m_log(shortfall + (refuse ? "; its routes answer 503 until it does" : "; serving it anyway (on_weaker_store: warn)"));
      else if (!said.empty())
        m_log("tier " + tier.name + ": the store now gives synchronous durability");
      said = shortfall;
    }
  }
  if (!refuse) return std::nullopt;
  Response r = makeProblem(Problem::DurabilityTooWeak, docsUrl,
                           "This operation's policy requires that an acknowledged request survive a failover, and "
                           "the store cannot promise that right now: " +
                               d->meaning() + ". Nothing was executed or stored; retry later.");
  r.headers.emplace_back("Retry-After", "5");
  return r;
}

std::map<std::string, DurabilityGate::Counts> DurabilityGate::counts() const {
  std::lock_guard lock(m_mutex);
  return m_counts;
}

}  // namespace idem::enforce
