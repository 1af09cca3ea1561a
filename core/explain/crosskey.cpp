// Duplicates across keys (docs/policy.md, "Duplicates across keys") told for support: which
// earlier execution a request matched, how far apart, what became of it, and what to do.
#include <algorithm>

#include "core/explain/resolve.h"
#include "core/text/humanduration.h"

namespace idem::explain {
namespace {

using std::chrono::microseconds;

std::string when(Instant t, const text::TimeZone& zone) { return text::humanTime(t.micros, zone); }

// What "the same request" meant on this route: its tier's fingerprint, as the policy in force
// wrote it ("same body"; "same /amount and /currency" for a fields fingerprint).
std::string sameWhat(const std::optional<Generation>& g) {
  if (!g || !g->policy || !g->policy->tier.is_object()) return "same body";
  const auto& fp = g->policy->tier.value("fingerprint", nlohmann::json::object());
  if (!fp.is_object() || fp.value("mode", "") != "fields" || !fp.contains("fields") || !fp["fields"].is_array())
    return "same body";
  std::vector<std::string> fields;
  for (const auto& f : fp["fields"])
    if (f.is_string()) fields.push_back(f.get<std::string>());
  if (fields.empty()) return "same body";
  std::string out = "same ";
  for (std::size_t i = 0; i < fields.size(); ++i)
    out += (i == 0 ? "" : i + 1 == fields.size() ? " and " : ", ") + fields[i];
  return out;
}

// "pay_X", else "the <thing> of key K1" (the key stored no resource id).
std::string resourceOr(const std::optional<std::string>& resource, const std::string& thing, const std::string& key) {
  return resource && !resource->empty() ? *resource : "the " + thing + " of key " + key;
}

std::string gapText(const CrossKeyFinding& f) {
  return f.gap ? text::humanDuration(*f.gap) : std::string("shortly");
}

// The words a finding's `text` holds, from the side of the key explained.
std::string tell(const CrossKeyFinding& f, const std::string& same, const Vocabulary& words,
                 const text::TimeZone& zone) {
  using O = trace::Outcome;
  const std::string earlier = resourceOr(f.earlierResource, words.thing, f.earlierKey);
  const std::string later = resourceOr(f.laterResource, words.thing, f.laterKey);
  const std::string confirm = "the client resends it with the header Idempotency-Duplicate-Confirmed: ?1";
  if (f.thisKeyIsLater) {
    // A repeat the client confirmed was meant is no retry: the hypothesis goes with the others.
    std::string out = "The request under this key at " + when(f.at, zone) + " matches " + earlier + ", " + gapText(f) +
                      " earlier, " + same + ", key " + f.earlierKey +
                      (f.outcome == O::DuplicateConfirmed ? std::string(".")
                                                          : ": a client that made a new key for its retry.");
    switch (f.outcome) {
      case O::DuplicateObserved:
        return out + " Both ran (" + later + " under this key): the route flags such repeats without stopping them.";
      case O::DuplicateConfirmed:
        return out + " The client confirmed it meant a second one (Idempotency-Duplicate-Confirmed), so it ran (" +
               later + ").";
      case O::DuplicateHeld:
        return out + " It was held (409, suspected duplicate): nothing ran twice. If the customer means a second " +
               words.thing + ", " + confirm + ".";
      case O::DuplicateRejected:
        return out + " It was refused (409): nothing ran twice. The route refuses such repeats inside its window; "
                     "a second " + words.thing + " can be sent once the window has passed.";
      default: return out;
    }
  }
  std::string out = "Key " + f.laterKey + " sent the same request " + gapText(f) + " later (" + same + ")";
  switch (f.outcome) {
    case O::DuplicateObserved:
      return out + " and it ran too (" + later + "): a suspected duplicate across keys, a client that made a new "
                   "key for its retry.";
    case O::DuplicateConfirmed:
      return out + "; the client confirmed it meant a second one, so it ran (" + later + ").";
    case O::DuplicateHeld: return out + "; it was held (409) and did not run.";
    case O::DuplicateRejected: return out + "; it was refused (409) and did not run.";
    default: return out + ".";
  }
}

}  // namespace

std::vector<CrossKeyFinding> findCrossKey(const KeyHistory& h, const text::TimeZone& zone) {
  const Vocabulary words = vocabularyFor(h.scope);
  std::vector<CrossKeyFinding> out;
  for (const CrossKeyMatch& m : h.crossKey) {
    CrossKeyFinding f;
    f.thisKeyIsLater = m.thisKeyIsLater;
    f.outcome = m.event.known().value_or(trace::Outcome::DuplicateObserved);
    f.at = m.event.at;
    f.earlierKey = m.thisKeyIsLater ? m.otherKey : h.key;
    f.laterKey = m.thisKeyIsLater ? h.key : m.otherKey;
    // This key's side: its generation the event names (the later key), else the latest created
    // by the event (the earlier key).
    const Generation* mine = nullptr;
    for (const auto& g : h.generations) {
      const bool named = m.event.generation && g.number == *m.event.generation;
      if (m.thisKeyIsLater ? named : g.createdAt <= m.event.at) mine = &g;
    }
    const Generation* earlier = m.thisKeyIsLater ? (m.other ? &*m.other : nullptr) : mine;
    const Generation* later = m.thisKeyIsLater ? mine : (m.other ? &*m.other : nullptr);
    if (earlier) {
      f.earlierResource = earlier->resourceRef;
      f.earlierAt = earlier->createdAt;
      f.gap = microseconds(f.at.micros - earlier->createdAt.micros);
    }
    if (later && f.bothRan()) {
      f.laterResource = later->resourceRef;
      f.laterAt = later->completedAt.value_or(later->createdAt);
    }
    f.text = tell(f, sameWhat(earlier ? std::optional<Generation>(*earlier) : m.other), words, zone);
    out.push_back(std::move(f));
  }
  return out;
}

bool confirmedLater(const Explanation& x, const CrossKeyFinding& f) {
  if (f.bothRan()) return false;
  return std::any_of(x.crossKey.begin(), x.crossKey.end(), [&](const CrossKeyFinding& g) {
    return g.outcome == trace::Outcome::DuplicateConfirmed && g.laterKey == f.laterKey &&
           g.earlierKey == f.earlierKey && f.at < g.at;
  });
}

void resolveCrossKey(const Explanation& x, Resolution& r) {
  const Vocabulary words = vocabularyFor(x.history.scope);
  std::string undo = words.undo;
  undo[0] = static_cast<char>(undo[0] - 'a' + 'A');
  std::vector<std::string> sentences;
  for (const CrossKeyFinding& f : x.crossKey) {
    const std::string earlier = resourceOr(f.earlierResource, words.thing, f.earlierKey);
    const std::string later = resourceOr(f.laterResource, words.thing, f.laterKey);
    if (f.outcome == trace::Outcome::DuplicateObserved) {
      if (f.thisKeyIsLater) {
        // This key's execution of the repeat: the one the event names, else the first after it.
        for (auto& e : r.executions) {
          if (e.role != ExecutionRole::Intended || e.at < f.at) continue;
          e.role = ExecutionRole::SuspectedDuplicate;
          e.reason = "the same request as " + earlier + " under key " + f.earlierKey + ", " + gapText(f) +
                     " earlier: a client that made a new key for its retry";
          ++r.duplicates;
          break;
        }
      }
      r.action = Resolution::Action::Refund;
      std::string refund = undo;
      refund += " " + later + " (key " + f.laterKey;
      if (f.laterAt) refund += ", " + words.created + " " + when(*f.laterAt, x.zone);
      refund += ", " + gapText(f) + " after " + earlier + " under key " + f.earlierKey;
      refund += ", the same request) unless the customer meant two; keep " + earlier + ".";
      sentences.push_back(std::move(refund));
    } else if (f.outcome == trace::Outcome::DuplicateConfirmed) {
      std::string meant = "Nothing to " + words.undo + " for " + later;
      meant += ": the client confirmed it meant a second " + words.thing;
      meant += " after " + earlier + " (key " + f.earlierKey + ").";
      sentences.push_back(std::move(meant));
    } else if (!confirmedLater(x, f)) {
      const bool held = f.outcome == trace::Outcome::DuplicateHeld;
      std::string stopped = "Nothing ran twice: the repeat under key " + f.laterKey;
      stopped += held ? " was held and " : " was refused and ";
      stopped += earlier + " (key " + f.earlierKey + ") stands. ";
      stopped += held ? "If the customer means a second " + words.thing +
                            ", the client resends it with Idempotency-Duplicate-Confirmed: ?1."
                      : "A second " + words.thing + " can be sent once the route's window has passed.";
      sentences.push_back(std::move(stopped));
    }
  }
  for (const auto& s : sentences) r.proposal += (r.proposal.empty() ? "" : " ") + s;
}

}  // namespace idem::explain
