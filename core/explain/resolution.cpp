#include "core/explain/resolution.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/explain/resolve.h"
#include "core/policy/duration.h"
#include "core/store/keystore.h"
#include "core/text/humanduration.h"

namespace idem::explain {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// What an execution left behind, as far as the store can tell. Ordered: a request's effect so
// far is the largest of its executions'.
enum class Effect { None = 0, Unknown = 1, Stands = 2 };

// An execution before its role is known.
struct Candidate {
  Execution execution;
  Effect effect = Effect::Stands;
  bool afterTakeover = false;  // ran after taking over another execution's lease
  bool firstOfGeneration = false;
  std::size_t generationIndex = 0;  // in history.generations
};

// A completed execution's effect from the status it answered: a 2xx/3xx created something, a
// 4xx was refused by the service (nothing created), a 5xx or none may have done anything.
Effect effectOfStatus(const std::optional<int>& status) {
  if (!status) return Effect::Unknown;
  if (*status >= 400 && *status < 500) return Effect::None;
  return *status >= 500 ? Effect::Unknown : Effect::Stands;
}

// The resource a completion's trace row names: the enforcer writes it first in `detail`
// ("pay_123" or "pay_123; note"); a detail that is a sentence names none.
std::optional<std::string> resourceInDetail(const std::optional<std::string>& detail) {
  if (!detail || detail->empty()) return std::nullopt;
  const std::string first = detail->substr(0, detail->find("; "));
  if (first.empty() || first.find(' ') != std::string::npos || first.find(':') != std::string::npos)
    return std::nullopt;
  return first;
}

std::string when(Instant t, const text::TimeZone& zone) { return text::humanTime(t.micros, zone); }
std::string span(microseconds d) { return text::humanDuration(d); }

// The whole unit above `observed` a policy can spell: seconds under a minute, minutes under an
// hour, hours under two days, then days. Strictly above: a key expires when expires_at <= now.
milliseconds roundUp(microseconds observed) {
  using namespace std::chrono;
  const auto above = duration_cast<milliseconds>(observed) + milliseconds(1);
  auto ceilTo = [&](milliseconds unit) { return unit * ((above.count() + unit.count() - 1) / unit.count()); };
  if (above < minutes(1)) return ceilTo(seconds(1));
  if (above < hours(1)) return ceilTo(minutes(1));
  if (above < hours(48)) return ceilTo(hours(1));
  return ceilTo(hours(24));
}

std::optional<milliseconds> tierDuration(const Generation& g, const char* field) {
  if (!g.policy || !g.policy->tier.is_object() || !g.policy->tier.contains(field)) return std::nullopt;
  const auto& v = g.policy->tier[field];
  if (!v.is_string()) return std::nullopt;
  return policy::parseDuration(v.get<std::string>());
}

class Resolver {
 public:
  Resolver(const Explanation& x, const std::vector<int>& eventGeneration)
      : m_x(x), m_h(x.history), m_eventGeneration(eventGeneration), m_words(vocabularyFor(x.history.scope)) {}

  Resolution run() {
    for (std::size_t i = 0; i < m_h.generations.size(); ++i) collect(i);
    assignRoles();
    for (auto& c : m_candidates) readAmount(m_h, c.execution);  // the proposal names them
    for (const auto& c : m_candidates) {
      m_r.executions.push_back(c.execution);
      if (c.execution.role == ExecutionRole::Duplicate) ++m_r.duplicates;
    }
    const bool severalRan = m_candidates.size() > 1;
    for (const auto& c : m_candidates) {
      const auto role = c.execution.role;
      if (role == ExecutionRole::PossibleDuplicate || (role == ExecutionRole::OutcomeUnknown && severalRan))
        ++m_r.possibleDuplicates;
    }
    propose();
    prevent();
    resolveCrossKey(m_x, m_r);
    return std::move(m_r);
  }

 private:
  // The executions of generation i, in the order they ran.
  void collect(std::size_t i) {
    const Generation& g = m_h.generations[i];
    const GenerationSummary& s = m_x.generations[i];
    std::vector<const Event*> takeovers, completions, lost;
    for (std::size_t k = 0; k < m_h.events.size(); ++k) {
      if (m_eventGeneration[k] != static_cast<int>(i)) continue;
      const Event& e = m_h.events[k];
      const auto o = e.known();
      if (!o) continue;
      if (*o == trace::Outcome::LeaseTakeover) takeovers.push_back(&e);
      else if (*o == trace::Outcome::LeaseLost) lost.push_back(&e);
      else if (e.isExecution()) completions.push_back(&e);
    }
    const std::size_t firstIndex = m_candidates.size();

    // Each takeover stands for the execution it superseded: started at the claim (or the
    // previous takeover), its response never stored. A lease_lost row says it finished late.
    Instant start = g.createdAt;
    std::optional<std::string> startedBy;
    for (std::size_t j = 0; j < takeovers.size(); ++j) {
      Candidate c;
      c.execution.generation = g.number;
      c.execution.at = start;
      c.execution.outcome = "lease_takeover";
      c.execution.requestId = startedBy;
      c.afterTakeover = j > 0;
      const std::string takenAt = when(takeovers[j]->at, m_x.zone);
      if (j < lost.size()) {
        const std::string detail = lost[j]->detail.value_or("");
        const bool rolledBack = detail.starts_with(store::kLeaseLostRolledBack);
        c.effect = rolledBack ? Effect::None : Effect::Stands;
        c.execution.status = lost[j]->status;
        c.execution.requestId = lost[j]->requestId;
        if (const auto r = detail.find(store::kDetailResource); r != std::string::npos && !rolledBack)
          c.execution.resource = detail.substr(r + store::kDetailResource.size());
        c.execution.reason = "its lease ran out before it finished (taken over at " + takenAt + "); it finished " +
                             span(microseconds(lost[j]->at.micros - start.micros)) + " after it started and " +
                             (rolledBack ? "its changes were rolled back" : "its response was not stored");
        m_leaseObserved = std::max(m_leaseObserved, microseconds(lost[j]->at.micros - start.micros));
      } else {
        c.effect = Effect::Unknown;
        c.execution.reason = "its lease ran out before it finished (taken over at " + takenAt +
                             "); whether it took effect is unknown (its executor may have stopped)";
        m_takeoverUnknown = true;
      }
      m_candidates.push_back(std::move(c));
      start = takeovers[j]->at;
      startedBy = takeovers[j]->requestId;
    }

    for (std::size_t j = 0; j < completions.size(); ++j) {
      const Event& e = *completions[j];
      Candidate c;
      c.execution.generation = g.number;
      c.execution.at = e.at;
      c.execution.outcome = e.outcome;
      c.execution.requestId = e.requestId ? e.requestId : startedBy;
      c.execution.status = e.status;
      c.afterTakeover = !takeovers.empty();
      const bool stored = j + 1 == completions.size() && g.state == "done";
      c.execution.resource = stored && g.resourceRef && !g.resourceRef->empty() ? g.resourceRef
                                                                              : resourceInDetail(e.detail);
      c.effect = e.known() == trace::Outcome::OutcomeUnknown ? Effect::Unknown : effectOfStatus(e.status);
      m_candidates.push_back(std::move(c));
    }

    if (takeovers.empty() && completions.empty()) {
      if (g.state == "done") {  // the key says it ran; its trace row is missing
        Candidate c;
        c.execution.generation = g.number;
        c.execution.at = g.completedAt.value_or(g.createdAt);
        c.execution.outcome = "done";
        c.execution.resource = g.resourceRef;
        c.execution.requestId = g.requestId;
        c.execution.status = g.status;
        c.effect = effectOfStatus(g.status);
        m_candidates.push_back(std::move(c));
      } else if (s.inDoubt) {
        Candidate c;
        c.execution.generation = g.number;
        c.execution.at = g.createdAt;
        c.execution.outcome = "in_doubt";
        c.execution.requestId = g.requestId;
        c.effect = Effect::Unknown;
        c.execution.reason = "its executor stopped before storing a response: it may or may not have run";
        m_candidates.push_back(std::move(c));
      }
    }
    for (std::size_t k = firstIndex; k < m_candidates.size(); ++k) m_candidates[k].generationIndex = i;
    if (m_candidates.size() > firstIndex) {
      m_candidates[firstIndex].firstOfGeneration = true;
      if (s.afterExpiry && i > 0) {
        const auto& prev = m_h.generations[i - 1];
        const microseconds gap(g.createdAt.micros - prev.expiresAt.micros);
        for (std::size_t k = firstIndex; k < m_candidates.size(); ++k)
          if (gap.count() >= 0) m_candidates[k].execution.afterExpiry = gap;
      }
    }
  }

  // Walks the executions of each request (a run of generations with the same payload) in
  // order: the first one with an effect is intended, any later one that ran while an earlier
  // effect stands is a duplicate, and a possible one while the earlier effect is unknown.
  void assignRoles() {
    Effect sofar = Effect::None;
    bool newRequest = false;
    for (std::size_t k = 0; k < m_candidates.size(); ++k) {
      Candidate& c = m_candidates[k];
      const std::size_t gen = c.generationIndex;
      Execution& e = c.execution;
      if (c.firstOfGeneration && gen > 0 && !m_x.generations[gen].samePayloadAsPrevious) {
        sofar = Effect::None;  // another payload: another request
        newRequest = true;
      }
      const std::string again = againText(c);
      if (c.effect == Effect::None) {
        e.role = ExecutionRole::NoEffect;
        if (e.reason.empty())
          e.reason = "the service refused it" + (e.status ? " (" + std::to_string(*e.status) + ")" : std::string()) +
                     ": nothing was created";
      } else if (c.effect == Effect::Unknown) {
        e.role = sofar == Effect::None ? ExecutionRole::OutcomeUnknown : ExecutionRole::PossibleDuplicate;
        if (e.reason.empty())
          e.reason = e.outcome == "outcome_unknown" ? "the service never answered: it may or may not have run"
                                                    : "it answered " + (e.status ? std::to_string(*e.status) : "nothing") +
                                                          ": it may or may not have taken effect";
        if (e.role == ExecutionRole::PossibleDuplicate) e.reason = again + "; " + e.reason;
      } else if (sofar == Effect::None) {
        e.role = newRequest ? ExecutionRole::SeparateRequest : ExecutionRole::Intended;
        if (e.reason.empty())
          e.reason = newRequest ? "a new request: the same key with another payload" +
                                      (e.afterExpiry ? ", " + span(*e.afterExpiry) + " after the key expired" : "")
                                : k == 0 ? "the first execution" : "the first execution that took effect";
        else if (!newRequest)
          e.reason += "; the execution that took effect";
      } else {
        e.role = sofar == Effect::Stands ? ExecutionRole::Duplicate : ExecutionRole::PossibleDuplicate;
        e.reason = again + (e.role == ExecutionRole::PossibleDuplicate
                                ? "; whether the earlier execution took effect is unknown"
                                : std::string());
      }
      newRequest = newRequest && c.effect == Effect::None;
      sofar = std::max(sofar, c.effect);
      if (e.role == ExecutionRole::Duplicate || e.role == ExecutionRole::PossibleDuplicate) {
        if (c.afterTakeover) m_byTakeover = true;
        else if (e.afterExpiry) m_byExpiry.push_back(gen);
      }
    }
  }

  std::string againText(const Candidate& c) const {
    if (c.afterTakeover && !c.firstOfGeneration) return "executed again after taking over an expired lease";
    if (c.execution.afterExpiry) return "executed again " + span(*c.execution.afterExpiry) + " after the key expired";
    return "executed again";
  }

  // "pay_456 of $2,499.00 (generation 2, charged 4 Dec 2026, 11:05 UTC, 33 min after the key expired)"
  std::string describe(const Candidate& c) const {
    const Execution& e = c.execution;
    std::string what = e.resource ? *e.resource
                                  : "the " + m_words.thing + " of request " + e.requestId.value_or("(unknown)") +
                                        " (its id was not stored)";
    if (e.amount) what += " of " + policy::formatMoney(*e.amount);
    std::string out = what + " (generation " + std::to_string(e.generation) + ", " + m_words.created + " " +
                      when(e.at, m_x.zone);
    if (c.afterTakeover && !c.firstOfGeneration) out += ", after a lease takeover";
    else if (e.afterExpiry) out += ", " + span(*e.afterExpiry) + " after the key expired";
    return out + ")";
  }

  void propose() {
    std::vector<const Candidate*> duplicates, possible, unknown, kept;
    for (const auto& c : m_candidates) {
      switch (c.execution.role) {
        case ExecutionRole::Duplicate: duplicates.push_back(&c); break;
        case ExecutionRole::PossibleDuplicate: possible.push_back(&c); break;
        case ExecutionRole::OutcomeUnknown: unknown.push_back(&c); break;
        case ExecutionRole::Intended:
        case ExecutionRole::SeparateRequest: kept.push_back(&c); break;
        case ExecutionRole::NoEffect:
        case ExecutionRole::SuspectedDuplicate: break;  // assigned after, by resolveCrossKey
      }
    }
    auto list = [&](const std::vector<const Candidate*>& cs) {
      std::string out;
      for (std::size_t i = 0; i < cs.size(); ++i)
        out += (i == 0 ? "" : i + 1 == cs.size() ? " and " : ", ") + describe(*cs[i]);
      return out;
    };
    std::string undo = m_words.undo;
    undo[0] = static_cast<char>(undo[0] - 'a' + 'A');
    std::vector<std::string> sentences;
    if (!duplicates.empty()) {
      m_r.action = Resolution::Action::Refund;
      sentences.push_back(undo + " " + list(duplicates) + ".");
    }
    if (!possible.empty()) {
      if (m_r.action == Resolution::Action::None) m_r.action = Resolution::Action::Verify;
      const std::vector<const Candidate*> earlier(unknown.begin(), unknown.end());
      std::string check = earlier.empty()
                              ? "the earlier execution"
                              : "the execution started " + when(earlier.front()->execution.at, m_x.zone) +
                                    (earlier.front()->execution.requestId
                                         ? " (request " + *earlier.front()->execution.requestId + ")"
                                         : std::string());
      sentences.push_back("Check whether " + check + " took effect: if it did, " + m_words.undo + " " +
                          list(possible) + "; if not, nothing is to be " + (m_words.undo == "refund" ? "refunded" : "reversed") +
                          ".");
    } else if (!unknown.empty()) {
      if (m_r.action == Resolution::Action::None) m_r.action = Resolution::Action::Verify;
      for (const auto* u : unknown)
        sentences.push_back("Check with the service whether " +
                            (u->execution.requestId ? "request " + *u->execution.requestId : std::string("the request")) +
                            " (generation " + std::to_string(u->execution.generation) + ", " +
                            when(u->execution.at, m_x.zone) + ") took effect: " + u->execution.reason + ".");
    }
    if (!sentences.empty() && !kept.empty()) {
      std::string keep = "Keep ";
      for (std::size_t i = 0; i < kept.size(); ++i)
        keep += (i == 0 ? "" : i + 1 == kept.size() ? " and " : ", ") + describe(*kept[i]);
      sentences.push_back(keep + ".");
    }
    for (std::size_t i = 0; i < sentences.size(); ++i) m_r.proposal += (i ? " " : "") + sentences[i];
  }

  // The policy change that would have kept the duplicate from running.
  void prevent() {
    if (!m_byExpiry.empty()) {
      const std::size_t dup = m_byExpiry.front();
      // The request's first generation: the start of the run of same-payload generations.
      std::size_t first = dup;
      while (first > 0 && m_x.generations[first].samePayloadAsPrevious) --first;
      const Generation& expired = m_h.generations[dup - 1];
      Instant last = m_h.generations[dup].createdAt;
      for (std::size_t k = 0; k < m_h.events.size(); ++k) {
        const int gi = m_eventGeneration[k];
        if (gi < static_cast<int>(first) || gi > static_cast<int>(dup)) continue;
        const auto o = m_h.events[k].known();
        if (!o || *o == trace::Outcome::Mismatch || !(trace::isRetry(*o) || trace::isExecution(*o))) continue;
        last = std::max(last, m_h.events[k].lastAt.value_or(m_h.events[k].at));
      }
      Prevention p;
      p.tier = expired.tier;
      p.setting = "ttl";
      p.current = std::chrono::duration_cast<milliseconds>(microseconds(expired.expiresAt.micros - expired.createdAt.micros));
      p.observed = microseconds(last.micros - m_h.generations[first].createdAt.micros);
      p.suggested = roundUp(p.observed);
      p.text = "The " + p.tier + " tier's TTL (" + span(*p.current) + ") is shorter than this client's observed retry "
               "horizon (" + span(p.observed) + ": first request " + when(m_h.generations[first].createdAt, m_x.zone) +
               ", last retry " + when(last, m_x.zone) + "). A TTL of at least " + span(p.suggested) + " (\"ttl\": \"" +
               policy::formatDuration(p.suggested) + "\") would have replayed the retry instead of running it again; "
               "the client's own retry window may be longer (idemctl tiers shows the tier's horizon over all keys).";
      m_r.prevention = std::move(p);
    } else if (m_byTakeover && m_leaseObserved.count() > 0 && !m_takeoverUnknown) {
      const Generation* g = nullptr;
      for (const auto& c : m_candidates)
        if (c.execution.role == ExecutionRole::Duplicate || c.execution.role == ExecutionRole::PossibleDuplicate)
          for (const auto& gen : m_h.generations)
            if (gen.number == c.execution.generation && !g) g = &gen;
      Prevention p;
      p.tier = g ? g->tier : std::string();
      p.setting = "lease";
      if (g) p.current = tierDuration(*g, "lease");
      p.observed = m_leaseObserved;
      p.suggested = roundUp(p.observed);
      p.text = "The " + p.tier + " tier's lease" + (p.current ? " (" + span(*p.current) + ")" : std::string()) +
               " ran out while the first execution was still running (it ran " + span(p.observed) +
               "). Leases are renewed while their executor runs, so this one stalled; a lease of at least " +
               span(p.suggested) + " (\"lease\": \"" + policy::formatDuration(p.suggested) +
               "\") would have kept the retry out.";
      m_r.prevention = std::move(p);
    }
  }

  const Explanation& m_x;
  const KeyHistory& m_h;
  const std::vector<int>& m_eventGeneration;
  Vocabulary m_words;
  std::vector<Candidate> m_candidates;
  std::vector<std::size_t> m_byExpiry;      // generations holding a duplicate that ran after expiry
  bool m_byTakeover = false;
  bool m_takeoverUnknown = false;
  microseconds m_leaseObserved{0};
  Resolution m_r;
};

}  // namespace

std::string_view roleName(ExecutionRole role) {
  switch (role) {
    case ExecutionRole::Intended: return "intended";
    case ExecutionRole::Duplicate: return "duplicate";
    case ExecutionRole::PossibleDuplicate: return "possible_duplicate";
    case ExecutionRole::SeparateRequest: return "separate_request";
    case ExecutionRole::NoEffect: return "no_effect";
    case ExecutionRole::OutcomeUnknown: return "outcome_unknown";
    case ExecutionRole::SuspectedDuplicate: return "suspected_duplicate";
  }
  return "intended";
}

std::string_view actionName(Resolution::Action action) {
  switch (action) {
    case Resolution::Action::None: return "none";
    case Resolution::Action::Refund: return "refund";
    case Resolution::Action::Verify: return "verify";
  }
  return "none";
}

Vocabulary vocabularyFor(const Scope& scope) {
  std::string path = scope.endpoint;
  for (char& ch : path) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (path.find("payment") != std::string::npos || path.find("charge") != std::string::npos)
    return {"refund", "charged", "charge"};
  return {"reverse", "created", "resource"};
}

std::vector<int> eventGenerations(const KeyHistory& h) {
  std::map<int, int> byNumber;
  for (std::size_t i = 0; i < h.generations.size(); ++i) byNumber[h.generations[i].number] = static_cast<int>(i);
  std::vector<int> out;
  out.reserve(h.events.size());
  for (const auto& e : h.events) {
    if (e.generation) {
      auto it = byNumber.find(*e.generation);
      out.push_back(it == byNumber.end() ? -1 : it->second);
      continue;
    }
    int found = h.generations.empty() ? -1 : 0;
    for (std::size_t i = 0; i < h.generations.size(); ++i)
      if (h.generations[i].createdAt <= e.at) found = static_cast<int>(i);
    out.push_back(found);
  }
  return out;
}

Resolution resolve(const Explanation& x, const std::vector<int>& eventGeneration) {
  return Resolver(x, eventGeneration).run();
}

}  // namespace idem::explain
