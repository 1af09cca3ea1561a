#include "core/explain/explain.h"

#include <algorithm>
#include <map>

#include "core/explain/resolve.h"
#include "core/text/humanduration.h"
#include "core/text/json_text.h"

namespace idem::explain {
namespace {

std::string times(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string count(int n) { return n == 1 ? "once" : (n == 2 ? "twice" : std::to_string(n) + " times"); }

std::string span(Instant from, Instant to) { return text::humanDuration(std::chrono::microseconds(to.micros - from.micros)); }

// Every time in the narrative, in the reader's zone.
struct Clock {
  const text::TimeZone& zone;
  std::string operator()(Instant t) const { return text::humanTime(t.micros, zone); }
};

bool leaseValid(const Generation& g, Instant now) { return g.live && g.leaseUntil && *g.leaseUntil > now; }

// "201, pay_123" / "still running, lease until …" / "never completed: no response was stored".
std::string outcomeDetail(const Generation& g, Instant now, const Clock& when) {
  if (g.state == "done") {
    std::string out = g.status ? std::to_string(*g.status) : "no status recorded";
    if (g.resourceRef && !g.resourceRef->empty()) out += ", " + *g.resourceRef;
    return out;
  }
  if (leaseValid(g, now)) return "still running, lease until " + when(*g.leaseUntil);
  return "never completed: no response was stored";
}

std::string tierField(const Generation& g, const char* field) {
  if (!g.policy || !g.policy->tier.is_object() || !g.policy->tier.contains(field)) return {};
  const auto& v = g.policy->tier[field];
  return v.is_string() ? v.get<std::string>() : text::dumpJson(v);
}

std::string whichKey(std::size_t index, const Generation& g) {
  return index == 0 ? std::string("The key") : "Generation " + std::to_string(g.number);
}

}  // namespace

std::optional<Audience> parseAudience(std::string_view name) {
  if (name == "internal") return Audience::Internal;
  if (name == "customer") return Audience::Customer;
  return std::nullopt;
}

Explanation explain(KeyHistory history, const ExplainOptions& options) {
  Explanation x;
  x.history = std::move(history);
  x.zone = options.zone;
  const KeyHistory& h = x.history;
  const Instant now = h.observedAt;
  const Clock when{x.zone};

  for (std::size_t i = 0; i < h.generations.size(); ++i) {
    GenerationSummary s;
    s.generation = h.generations[i].number;
    x.generations.push_back(s);
  }

  int orphanExecutions = 0;  // execution events of generations no longer stored
  const std::vector<int> eventGeneration = eventGenerations(h);
  for (std::size_t k = 0; k < h.events.size(); ++k) {
    const Event& e = h.events[k];
    const int gi = eventGeneration[k];
    if (gi < 0) {
      if (e.isExecution()) ++orphanExecutions;
      continue;
    }
    const auto outcome = e.known();
    if (!outcome) continue;  // a name a newer writer knows: listed, not counted
    auto& s = x.generations[static_cast<std::size_t>(gi)];
    const auto o = static_cast<std::size_t>(*outcome);
    s.byOutcome[o] += e.repeats;
    s.lastAt[o] = e.lastAt.value_or(e.at);
    if (e.notRunAfterTakeover()) ++s.notRerun;
    if (e.isExecution()) {
      ++s.executions;
      if (!s.firstExecution || e.at < *s.firstExecution) s.firstExecution = e.at;
    }
  }
  for (auto& s : x.generations) {
    using O = trace::Outcome;
    s.afterExpiry = s.count(O::ExecutedAfterExpiry) > 0;
    s.takeovers = s.count(O::LeaseTakeover);
    s.replays = s.count(O::Replayed);
    s.conflicts = s.count(O::Conflict);
    s.mismatches = s.count(O::Mismatch);
    s.rejectedExpired = s.count(O::RejectedExpired);
    s.released = s.count(O::Released);
    s.leaseLost = s.count(O::LeaseLost);
    s.lastReplay = s.lastAt[static_cast<std::size_t>(O::Replayed)];
    s.lastRejectedExpired = s.lastAt[static_cast<std::size_t>(O::RejectedExpired)];
  }

  x.executions = orphanExecutions;
  for (std::size_t i = 0; i < h.generations.size(); ++i) {
    const auto& g = h.generations[i];
    auto& s = x.generations[i];
    // A done generation ran at least once even when its trace lacks the row: the key commits
    // before its trace row is queued (a crash can lose the row), or the trace was purged early.
    if (g.state == "done" && s.executions == 0) s.executions = 1;
    if (i > 0) {
      const auto& prev = h.generations[i - 1];
      if (prev.expiresAt <= g.createdAt) s.afterExpiry = true;
      s.samePayloadAsPrevious = !g.fingerprintHex.empty() && g.fingerprintHex == prev.fingerprintHex;
    }
    s.inDoubt = g.state == "processing" && !leaseValid(g, now) && s.takeovers == 0;
    x.executions += s.executions;
    if (s.inDoubt) ++x.inDoubt;
  }

  x.crossKey = findCrossKey(h, x.zone);

  // ---- narrative -------------------------------------------------------------------------
  std::vector<std::string> story;
  int lastExecutionSentence = -1;
  bool retryAfterExpiry = false;
  bool reuseAfterExpiry = false;
  bool takeover = false;
  std::string leaseText;

  if (h.generations.empty() && x.crossKey.empty()) {
    story.push_back("No generation of this key is stored (it may be past its archive retention); only its trace "
                    "remains.");
  }
  for (std::size_t i = 0; i < h.generations.size(); ++i) {
    const auto& g = h.generations[i];
    const auto& s = x.generations[i];
    const std::string detail = outcomeDetail(g, now, when);
    const std::string ttl = span(g.createdAt, g.expiresAt);

    // How the generation started.
    if (i == 0) {
      // An execution the service never answered (the proxy's outcome_unknown) was sent, not known to have run.
      const bool unanswered = s.executions > 0 && s.count(trace::Outcome::OutcomeUnknown) == s.executions;
      std::string verb = unanswered ? "sent to the service" : g.state == "done" ? "executed" : "claimed";
      if (g.number == 1 && !s.afterExpiry) {
        story.push_back("First " + verb + " at " + when(g.createdAt) + " (" + detail + ").");
      } else {
        story.push_back("Generation " + std::to_string(g.number) + " (earlier ones are past their retention) was " +
                        verb + " at " + when(g.createdAt) + " (" + detail + ").");
      }
    } else {
      const auto& prev = h.generations[i - 1];
      const std::int64_t gap = g.createdAt.micros - prev.expiresAt.micros;
      const std::string arrival = when(g.createdAt) + (gap >= 0 ? ", " + text::humanDuration(std::chrono::microseconds(gap)) + " after expiry," : "");
      const std::string what = "(generation " + std::to_string(g.number) + ", " + detail + ")";
      if (!s.afterExpiry) {
        story.push_back("Generation " + std::to_string(g.number) + " started at " + when(g.createdAt) + " " + what +
                        ".");
      } else if (s.samePayloadAsPrevious) {
        story.push_back("A retry arrived at " + arrival + " and was executed again as a new request " + what + ".");
        if (s.executions > 0) retryAfterExpiry = true;
      } else {
        story.push_back("A request with the same key but a different payload arrived at " + arrival +
                        " and was executed as a new request " + what + ".");
        if (s.executions > 0) reuseAfterExpiry = true;
      }
    }
    if (g.state == "done" || s.takeovers > 0) lastExecutionSentence = static_cast<int>(story.size()) - 1;
    if (s.inDoubt)
      story.push_back("Its executor stopped before storing a response, so the operation may or may not have run.");

    if (s.takeovers > 0) {
      takeover = true;
      if (leaseText.empty()) leaseText = tierField(g, "lease");
      const int rerun = s.takeovers - std::min(s.notRerun, s.takeovers);
      if (s.takeovers == 1)
        story.push_back(rerun == 1 ? "Its lease ran out before the execution finished; a retry took it over and "
                                     "executed it again."
                                   : "Its lease ran out before the execution finished (its executor stopped); a retry "
                                     "took it over and, since the request may already have run, did not run it "
                                     "again: it stored that the outcome is unknown.");
      else
        story.push_back("Its lease ran out before the execution finished; retries took it over " + count(s.takeovers) +
                        (rerun == s.takeovers ? " and executed it again each time."
                                              : ", executing it again " + count(rerun) +
                                                    " (the other times storing that the outcome is unknown)."));
      lastExecutionSentence = static_cast<int>(story.size()) - 1;
    }
    if (s.leaseLost > 0)
      story.push_back(times(s.leaseLost, "execution", "executions") +
                      " finished after losing its lease; the response was not stored.");
    if (s.released > 0)
      story.push_back(times(s.released, "attempt", "attempts") +
                      " failed before execution started and stored nothing (released).");
    if (s.conflicts > 0)
      story.push_back(times(s.conflicts, "request", "requests") + " arrived while it was still processing and got 409.");
    if (s.replays > 0)
      story.push_back("Replayed " + count(s.replays) + " within the key's " + ttl + " window (" +
                      (s.replays == 1 ? "at " : "last at ") + when(*s.lastReplay) + ").");
    if (s.mismatches > 0)
      story.push_back(times(s.mismatches, "request", "requests") +
                      " reused the key with a different payload and " + (s.mismatches == 1 ? "was" : "were") +
                      " refused (422).");

    // How it ended.
    const bool later = i + 1 < h.generations.size();
    if (!g.live && g.archivedBy == "sweeper" && g.archivedAt) {
      story.push_back(whichKey(i, g) + " expired at " + when(g.expiresAt) + " and was archived by the sweeper at " +
                      when(*g.archivedAt) + ".");
    } else if (!g.live || later) {
      story.push_back(whichKey(i, g) + " expired at " + when(g.expiresAt) + ".");
    }
    if (g.bodyDroppedAt)
      story.push_back("Its stored response body was dropped at " + when(*g.bodyDroppedAt) +
                      " (the tier's body retention); the record itself is kept" +
                      (g.purgeAfter ? " until " + when(*g.purgeAfter) : std::string()) + ".");
    if (s.rejectedExpired > 0)
      story.push_back(times(s.rejectedExpired, "request", "requests") + " arrived after expiry and " +
                      (s.rejectedExpired == 1 ? "was" : "were") + " refused (422: this tier rejects expired keys; " +
                      (s.rejectedExpired == 1 ? "at " : "last at ") + when(*s.lastRejectedExpired) + ").");
  }

  // Totals: attached to the last execution when nothing follows it, else a sentence of its own.
  int unanswered = 0;
  for (const auto& s : x.generations) unanswered += s.count(trace::Outcome::OutcomeUnknown);
  x.unanswered = unanswered;
  std::string total;
  if (x.executions >= 2) total = std::to_string(x.executions) + " executions";
  if (!total.empty() && lastExecutionSentence == static_cast<int>(story.size()) - 1) {
    auto& last = story.back();
    last.insert(last.size() - 1, " — " + total);
  } else if (x.executions >= 2) {
    story.push_back("The operation ran " + std::to_string(x.executions) + " times.");
  } else if (x.executions == 1 && unanswered == 1) {
    story.push_back("The service never answered, so the operation may or may not have run: check with the service.");
  } else if (x.executions == 1) {
    // Next to another key's execution of the same request, "once" holds for this key only.
    story.push_back(x.crossKey.empty() ? "The operation ran once." : "The operation ran once under this key.");
  } else if (x.inDoubt == 0 && !(h.generations.size() == 1 && leaseValid(h.generations.front(), now))) {
    story.push_back("The operation has not run.");
  }
  if (x.executions >= 2 && unanswered > 0)
    story.push_back(unanswered == 1 ? "One of them got no answer from the service and may or may not have run."
                                    : std::to_string(unanswered) +
                                          " of them got no answer from the service and may or may not have run.");
  if (x.inDoubt > 0 && x.executions > 0)
    story.push_back(times(x.inDoubt, "more execution", "more executions") + " may have run without storing a response.");

  for (const auto& f : x.crossKey) story.push_back(f.text);

  std::vector<std::string> causes;
  if (std::any_of(x.crossKey.begin(), x.crossKey.end(), [](const CrossKeyFinding& f) {
        return f.thisKeyIsLater && f.outcome == trace::Outcome::DuplicateObserved;
      }))
    causes.push_back("the client made a new key for its retry (a duplicate across keys)");
  if (x.executions + x.inDoubt >= 2) {
    if (retryAfterExpiry) causes.push_back("the client's retry horizon outran the key's TTL");
    if (reuseAfterExpiry) causes.push_back("the client reused the key for a different request after it expired");
    if (takeover)
      causes.push_back(leaseText.empty() ? "an execution outlived its lease and a retry took it over"
                                         : "an execution outlived its " + leaseText + " lease and a retry took it over");
  }
  if (!causes.empty()) {
    x.cause = causes.front();
    for (std::size_t i = 1; i < causes.size(); ++i) x.cause += "; " + causes[i];
    story.push_back("Cause: " + x.cause + ".");
  }

  // Where the live generation stands now.
  if (!h.generations.empty() && h.generations.back().live && h.generations.back().state == "done") {
    const auto& g = h.generations.back();
    const std::string who = h.generations.size() == 1 ? "The key" : "Generation " + std::to_string(g.number);
    if (g.expiresAt > now)
      story.push_back(who + " is honoured until " + when(g.expiresAt) + ".");
    else
      story.push_back(who + " expired at " + when(g.expiresAt) + " and is stored until the sweeper archives it.");
  }

  for (std::size_t i = 0; i < story.size(); ++i) {
    if (i) x.narrative += ' ';
    x.narrative += story[i];
  }
  x.resolution = resolve(x, eventGeneration);
  x.customer = tellCustomer(x);
  return x;
}

}  // namespace idem::explain
