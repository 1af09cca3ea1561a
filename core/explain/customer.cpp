// The customer's words. Nothing internal may appear here: no key, generation, lease, tier,
// policy, request id or TTL — tests/store/tst_resolution.cpp checks the rendered text for them.
#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "core/explain/resolve.h"
#include "core/text/humanduration.h"

namespace idem::explain {
namespace {

using std::chrono::microseconds;

std::string when(Instant t, const text::TimeZone& zone) { return text::humanTime(t.micros, zone); }
std::string span(microseconds d) { return text::humanDuration(d); }
std::string times(int n) { return n == 1 ? "once" : n == 2 ? "twice" : std::to_string(n) + " times"; }
std::string moreTimes(int n) { return n == 1 ? "again" : n == 2 ? "twice more" : std::to_string(n) + " more times"; }
// "pay_456, $2,499.00": the id and the amount the customer finds on a statement.
std::string idAndAmount(const Execution& e) {
  std::string out = e.resource ? *e.resource : std::string();
  if (e.amount) out += (out.empty() ? "" : ", ") + policy::formatMoney(*e.amount);
  return out;
}
std::string idOf(const Execution& e) {
  const std::string what = idAndAmount(e);
  return what.empty() ? std::string() : " (" + what + ")";
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

class Teller {
 public:
  Teller(const Explanation& x, Addressee to)
      : m_x(x), m_h(x.history), m_words(vocabularyFor(x.history.scope)), m_eventGeneration(eventGenerations(m_h)),
        m_consumer(to == Addressee::Consumer) {
    for (std::size_t i = 0; i < m_h.generations.size(); ++i) m_index[m_h.generations[i].number] = i;
    // A consumer paid; a merchant's system sent requests.
    m_noun = m_consumer && m_words.thing == "charge" ? "payment" : "request";
    m_done = m_consumer ? m_words.created == "charged" ? "charged" : "processed" : "processed";
  }

  CustomerExplanation run() {
    for (const auto& e : m_x.resolution.executions) tellExecution(e);
    for (const auto& f : m_x.crossKey) tellCrossKey(f);
    std::vector<const Execution*> all;
    for (const auto& e : m_x.resolution.executions) all.push_back(&e);
    for (const auto& e : m_otherKeys) all.push_back(&e);
    std::sort(all.begin(), all.end(), [](const Execution* a, const Execution* b) { return a->at < b->at; });
    for (const auto* e : all)
      if (e->resource &&
          std::find(m_c.references.begin(), m_c.references.end(), *e->resource) == m_c.references.end())
        m_c.references.push_back(*e->resource);
    for (std::size_t i = 0; i < m_h.generations.size(); ++i) tellRepeats(i);
    std::stable_sort(m_c.timeline.begin(), m_c.timeline.end(),
                     [](const auto& a, const auto& b) { return a.at < b.at; });
    summarise();
    return std::move(m_c);
  }

 private:
  // How long repeats were recognised for the request the generation answered.
  std::optional<microseconds> windowBefore(int number) const {
    const std::size_t i = m_index.at(number);
    if (i == 0) return std::nullopt;
    const auto& prev = m_h.generations[i - 1];
    return microseconds(prev.expiresAt.micros - prev.createdAt.micros);
  }

  void add(Instant at, std::string text) { m_c.timeline.push_back({at, std::move(text)}); }

  // Who sent it again: the merchant's system, or (to a consumer, who did nothing wrong) nobody named.
  std::string sentAgain() const {
    return m_consumer ? "The same " + m_noun + " was sent to us again" : "Your system sent the same request again";
  }
  std::string sentAgainTimes(const std::string& howOften) const {
    return m_consumer ? "The same " + m_noun + " was sent to us " + howOften
                      : "Your system sent the same request " + howOften;
  }

  void tellExecution(const Execution& e) {
    const bool afterTakeover = e.outcome != "lease_takeover" && e.reason.find("taking over") != std::string::npos;
    switch (e.role) {
      case ExecutionRole::Intended:
        if (confirmedRepeat(e)) {  // told with the match it repeats (tellCrossKey)
          m_kept.push_back(&e);
          break;
        }
        add(e.at, (m_c.timeline.empty() ? "We received your " + m_noun + " and " + m_done + " it"
                                         : "Your " + m_noun + " was " + m_done) +
                      idOf(e) + ".");
        m_kept.push_back(&e);
        break;
      case ExecutionRole::SeparateRequest:
        add(e.at, (m_consumer ? "A different " + m_noun + " was made under the same reference; it was " + m_done +
                                    " as a new " + m_noun
                              : std::string("Your system sent a different request under the same identifier; it was "
                                            "processed as a new request")) +
                      idOf(e) + ".");
        m_kept.push_back(&e);
        m_separate = true;
        break;
      case ExecutionRole::Duplicate:
      case ExecutionRole::PossibleDuplicate: {
        std::string text;
        if (afterTakeover || !e.afterExpiry) {
          text = "Processing of your " + m_noun + " stalled, and when " +
                 (m_consumer ? "it was sent again" : "your system sent it again") + " it was " + m_done +
                 " a second time" + idOf(e) + ".";
        } else {
          const auto window = windowBefore(e.generation);
          const auto first = firstRequest(e.generation);
          text = sentAgain() +
                 (first ? ", " + span(microseconds(e.at.micros - first->micros)) + " after the first one" : std::string()) +
                 ". That is later than the " + (window ? span(*window) : std::string("period")) +
                 " during which we recognise a repeated " + m_noun + ", so it was " + m_done + " a second time" +
                 idOf(e) + ".";
          if (window) m_window = window;
        }
        add(e.at, text);
        (e.role == ExecutionRole::Duplicate ? m_duplicates : m_possible).push_back(&e);
        break;
      }
      case ExecutionRole::NoEffect:
        add(e.at, e.outcome == "lease_takeover"
                      ? "A first attempt at processing your request was interrupted and undone; nothing from it "
                        "remains."
                      : "Your " + m_noun + " was declined; nothing was " + m_words.created + ".");
        break;
      case ExecutionRole::SuspectedDuplicate:  // its words come with the match (tellCrossKey)
        m_duplicates.push_back(&e);
        break;
      case ExecutionRole::OutcomeUnknown:
        add(e.at, e.outcome == "outcome_unknown"
                      ? "We passed your " + m_noun + " on but got no answer, so we cannot yet confirm whether it was " +
                            m_done + "."
                      : "Processing of your " + m_noun + " was interrupted before it finished, so we cannot yet "
                        "confirm whether it took effect.");
        m_unknown.push_back(&e);
        break;
    }
  }

  // A repeat under a new identifier (a duplicate across keys): the other side's execution joins
  // the story as the customer saw it, and the repeat is told with what became of it.
  void tellCrossKey(const CrossKeyFinding& f) {
    using O = trace::Outcome;
    const std::string after = f.gap ? ", " + span(*f.gap) + " after the first one" : std::string();
    const std::string first = f.earlierResource ? " (" + *f.earlierResource + ")" : std::string();
    // The earlier charge once, however many repeats of it this key made (held, then confirmed).
    if (f.thisKeyIsLater && f.earlierAt && m_earlierTold.insert(f.earlierKey).second) {
      Execution& earlier = other(*f.earlierAt, f.earlierResource);
      add(earlier.at, "We received your " + m_noun + " and " + m_done + " it" + idOf(earlier) + ".");
      m_kept.push_back(&earlier);
    }
    const std::string again = (m_consumer ? "The same " + m_noun + " was sent to us again"
                                          : std::string("Your system sent the same request again under a new identifier")) +
                              after + first;
    const std::string second = f.laterResource ? " (" + *f.laterResource + ")" : std::string();
    switch (f.outcome) {
      case O::DuplicateObserved:
        add(f.at, again + ", and it was " + m_done + " a second time" + second + ".");
        if (!f.thisKeyIsLater) m_duplicates.push_back(&other(f.laterAt.value_or(f.at), f.laterResource));
        m_newIdentifier = true;
        break;
      case O::DuplicateConfirmed:
        add(f.at, again + (m_consumer ? ", confirmed as intended" : std::string(", confirming that it was intended")) +
                      ", and it was " + m_done + second + ".");
        if (!f.thisKeyIsLater) m_kept.push_back(&other(f.laterAt.value_or(f.at), f.laterResource));
        m_confirmed = true;
        break;
      case O::DuplicateHeld:
      case O::DuplicateRejected:
        add(f.at, again + "; we " + (f.outcome == O::DuplicateHeld ? "held" : "refused") +
                      " it as a likely repeat and nothing was " + m_done + " again.");
        if (!confirmedLater(m_x, f)) m_stopped = f.outcome == O::DuplicateHeld ? Stopped::Held : Stopped::Refused;
        break;
      default: break;
    }
  }

  // This key's execution of a repeat the client confirmed as meant.
  bool confirmedRepeat(const Execution& e) const {
    return std::any_of(m_x.crossKey.begin(), m_x.crossKey.end(), [&](const CrossKeyFinding& f) {
      return f.thisKeyIsLater && f.outcome == trace::Outcome::DuplicateConfirmed && !(e.at < f.at);
    });
  }

  // The other key's execution, kept here so the lists can point at it.
  Execution& other(Instant at, const std::optional<std::string>& resource) {
    Execution e;
    e.at = at;
    e.resource = resource;
    return m_otherKeys.emplace_back(std::move(e));
  }

  // When the request was first sent: the start of the run of same-payload generations.
  std::optional<Instant> firstRequest(int number) const {
    std::size_t i = m_index.at(number);
    while (i > 0 && m_x.generations[i].samePayloadAsPrevious) --i;
    return m_h.generations[i].createdAt;
  }

  // Repeats that were answered from the stored result, and those refused.
  void tellRepeats(std::size_t i) {
    const GenerationSummary& s = m_x.generations[i];
    using O = trace::Outcome;
    if (s.replays > 0) {
      const auto first = firstAt(i, O::Replayed);
      add(first.value_or(*s.lastReplay),
          sentAgainTimes(moreTimes(s.replays)) +
              (s.replays > 1 && s.lastReplay ? " (the last on " + when(*s.lastReplay, m_x.zone) + ")" : std::string()) +
              "; we recognised " + (s.replays == 1 ? "it" : "each") + " as a repeat" +
              (m_consumer ? "" : " and answered with the original result") + ". Nothing was " + m_done + " again.");
    }
    if (s.rejectedExpired > 0)
      add(firstAt(i, O::RejectedExpired).value_or(*s.lastRejectedExpired),
          sentAgainTimes(times(s.rejectedExpired)) +
              " after the period during which we recognise repeats; we refused it and nothing was " + m_done + ".");
    if (s.mismatches > 0)
      add(firstAt(i, O::Mismatch).value_or(m_h.generations[i].createdAt),
          "A " + m_noun + " under the same " + (m_consumer ? "reference" : "identifier") +
              " but with different details was refused " + times(s.mismatches) + "; nothing was " + m_done + ".");
  }

  std::optional<Instant> firstAt(std::size_t i, trace::Outcome o) const {
    for (std::size_t k = 0; k < m_h.events.size(); ++k)
      if (m_eventGeneration[k] == static_cast<int>(i) && m_h.events[k].known() == o) return m_h.events[k].at;
    return std::nullopt;
  }

  std::string listed(const std::vector<const Execution*>& es) const {
    std::vector<std::string> parts;
    for (const auto* e : es)
      parts.push_back((e->resource ? *e->resource : "the " + m_words.thing) + amountOf(*e) + " on " +
                      when(e->at, m_x.zone));
    return joined(parts);
  }

  static std::string amountOf(const Execution& e) {
    return e.amount ? " (" + policy::formatMoney(*e.amount) + ")" : std::string();
  }

  // withAmount: "pay_456 ($2,499.00)", what an undo names.
  std::string ids(const std::vector<const Execution*>& es, bool withAmount = false) const {
    std::vector<std::string> parts;
    for (const auto* e : es)
      parts.push_back((e->resource ? *e->resource : "the " + m_words.thing + " made on " + when(e->at, m_x.zone)) +
                      (withAmount ? amountOf(*e) : std::string()));
    return joined(parts);
  }

  void summarise() {
    std::vector<const Execution*> ran = m_kept;
    ran.insert(ran.end(), m_duplicates.begin(), m_duplicates.end());
    ran.insert(ran.end(), m_possible.begin(), m_possible.end());
    std::sort(ran.begin(), ran.end(), [](const Execution* a, const Execution* b) { return a->at < b->at; });
    const int n = static_cast<int>(ran.size());
    if (!m_duplicates.empty()) {
      m_c.summary = "Your " + m_noun + " was " + m_done + " " + times(n) + ": " + listed(ran) + ". " + ids(m_duplicates) +
                    (m_duplicates.size() == 1 ? " is a duplicate." : " are duplicates.");
      m_c.action = "We will " + m_words.undo + " " + ids(m_duplicates, true) + ".";
      // Across identifiers Idem cannot tell a retry from a second purchase: the customer can.
      if (m_newIdentifier)
        m_c.action += m_consumer ? " If you meant to pay twice, tell us and we will keep both."
                                 : " If both were meant, tell us and we will keep both.";
    } else if (!m_possible.empty()) {
      m_c.summary = "Your " + m_noun + " may have been " + m_done + " " + times(n + static_cast<int>(m_unknown.size())) + ": " +
                    listed(ran) + ", after an earlier attempt that was interrupted.";
      m_c.action = "We are checking whether the interrupted attempt took effect. If it did, we will " + m_words.undo +
                   " " + ids(m_possible, true) + " and let you know; if it did not, nothing needs to be done.";
    } else if (!m_unknown.empty()) {
      m_c.summary = n > 0 ? "Your " + m_noun + " was " + m_done + " " + times(n) + " (" + listed(ran) +
                                "), and we cannot yet confirm whether another attempt took effect."
                          : "We cannot yet confirm whether your " + m_noun + " was " + m_done + ".";
      m_c.action = "We are checking with the service that handled it and will let you know whether it went through.";
    } else if (m_separate) {
      m_c.summary = (m_consumer ? std::to_string(n) + " different " + m_noun + "s were made under one reference"
                                : "Your system sent " + std::to_string(n) + " different requests under one identifier") +
                    ", and each was " + m_done + " once: " + listed(ran) + ". None of them is a duplicate.";
      m_c.action = "Nothing needs to be done.";
    } else if (m_confirmed && n > 1) {
      m_c.summary = "Your " + m_noun + " was " + m_done + " " + times(n) + ", as confirmed when it was sent again: " +
                    listed(ran) + ". None of them is a duplicate.";
      m_c.action = "Nothing needs to be done.";
    } else if (n == 1) {
      m_c.summary = "Your " + m_noun + " was " + m_done + " once: " + listed(ran) + ". No duplicate was made.";
      m_c.action = "Nothing needs to be done.";
      if (m_stopped == Stopped::Held)
        m_c.action += m_consumer ? " If you meant to pay twice, please make the second payment again."
                                 : " If a second request was meant, send it again confirming that it is intended.";
      else if (m_stopped == Stopped::Refused && !m_consumer)
        m_c.action += " If a second request was meant, send it again later.";
    } else {
      m_c.summary = "Your " + m_noun + " has not been " + m_done + ".";
      m_c.action = "Nothing needs to be done.";
    }
    // Advice on retries is for whoever sends them: the merchant's developers, not a consumer.
    if (m_window && !m_consumer)
      m_c.advice = "To avoid this, send repeats of a request within " + span(*m_window) +
                   " of the first one, or check whether it went through before sending it again after that.";
    else if ((m_newIdentifier || m_stopped != Stopped::No) && !m_confirmed && !m_consumer)
      m_c.advice = "To avoid this, send a retry with the identifier of the first request: a new identifier makes it "
                   "a new request.";
  }

  const Explanation& m_x;
  const KeyHistory& m_h;
  Vocabulary m_words;
  std::vector<int> m_eventGeneration;
  std::map<int, std::size_t> m_index;  // generation number -> index
  CustomerExplanation m_c;
  std::vector<const Execution*> m_kept, m_duplicates, m_possible, m_unknown;
  bool m_separate = false;
  std::set<std::string> m_earlierTold;  // earlier keys whose execution the story has
  std::deque<Execution> m_otherKeys;  // executions under the other identifier of a repeat (stable addresses)
  bool m_newIdentifier = false;       // a repeat under a new identifier ran a second time
  bool m_confirmed = false;           // ... and the client confirmed it meant it
  enum class Stopped { No, Held, Refused };
  Stopped m_stopped = Stopped::No;    // ... was stopped before it ran
  std::optional<microseconds> m_window;
  bool m_consumer;
  std::string m_noun;  // "request" | "payment"
  std::string m_done;  // "processed" | "charged"
};

}  // namespace

CustomerExplanation tellCustomer(const Explanation& x, Addressee to) { return Teller(x, to).run(); }

}  // namespace idem::explain
