#include "core/explain/letter.h"

#include <algorithm>
#include <set>

#include "core/explain/format_parts.h"
#include "core/explain/resolve.h"

namespace idem::explain {
namespace {

std::string spoken(const Explanation& x, Instant t) { return text::humanTime(t.micros, x.zone); }

// "6 Dec 2026": the date part of a human time, in the same zone as every other time.
std::string dateOf(const Explanation& x, Instant t) {
  const std::string full = spoken(x, t);
  return full.substr(0, full.find(','));
}

std::string times(int n) { return n == 1 ? "once" : n == 2 ? "twice" : std::to_string(n) + " times"; }

// The execution the customer meant: the first intended one, else the first.
const Execution* mainExecution(const Resolution& r) {
  for (const auto& e : r.executions)
    if (e.role == ExecutionRole::Intended) return &e;
  return r.executions.empty() ? nullptr : &r.executions.front();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() || !out.empty()) out.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

}  // namespace

Letter composeLetter(const Explanation& x, const LetterOptions& o) {
  const CustomerExplanation c = tellCustomer(x, o.to);
  const Vocabulary words = vocabularyFor(x.history.scope);
  const bool payments = words.thing == "charge";
  const Resolution& r = x.resolution;
  Letter l;
  l.sender = o.sender;
  l.date = dateOf(x, o.date);
  if (!o.ticket.empty()) l.reference = "Ticket " + o.ticket;
  // A title a person reads: what it is about (the amount, the day), then what went wrong.
  const Execution* main = mainExecution(r);
  l.title = std::string("Your ") + (payments ? "payment" : "request");
  if (main && main->amount) l.title += " of " + policy::formatMoney(*main->amount);
  // A request held as another key's repeat ran nothing itself: its day is the first one's.
  const CrossKeyFinding* across = x.crossKey.empty() ? nullptr : &x.crossKey.front();
  if (main) l.title += " on " + dateOf(x, main->at);
  else if (across && across->earlierAt) l.title += " on " + dateOf(x, *across->earlierAt);
  int ran = static_cast<int>(std::count_if(r.executions.begin(), r.executions.end(), [](const Execution& e) {
    return e.role == ExecutionRole::Intended || e.role == ExecutionRole::Duplicate ||
           e.role == ExecutionRole::PossibleDuplicate || e.role == ExecutionRole::SuspectedDuplicate;
  }));
  // The other key's execution of a repeat under a new key counts as the customer saw it.
  bool repeatRan = false;
  bool repeatStopped = false;
  std::set<std::string> earlier;  // each earlier key's charge once, however often it was repeated
  for (const auto& f : x.crossKey) {
    if (f.thisKeyIsLater ? f.earlierAt && earlier.insert(f.earlierKey).second : f.bothRan()) ++ran;
    repeatRan = repeatRan || f.outcome == trace::Outcome::DuplicateObserved;
    repeatStopped = repeatStopped || (!f.bothRan() && !confirmedLater(x, f));
  }
  const std::string done = payments ? "charged" : "processed";
  if (r.duplicates > 0 || repeatRan) l.title += ": " + done + " " + times(ran);
  else if (r.possibleDuplicates > 0) l.title += ": possibly " + done + " " + times(ran + 1);
  else if (repeatStopped) l.title += ": " + done + " once, the repeat stopped";
  l.greeting = o.to == Addressee::Consumer ? "Dear customer," : "Hello,";
  l.summary = c.summary;
  for (const auto& line : c.timeline) l.timeline.push_back({spoken(x, line.at), line.text});
  l.action = c.action;
  if (r.action == Resolution::Action::Refund && words.undo == "refund" && !o.refundTiming.empty())
    l.action += " " + o.refundTiming;
  l.advice = c.advice;
  if (!c.references.empty()) {
    l.references = std::string(payments ? "Charges" : "References") + ": ";
    for (std::size_t i = 0; i < c.references.size(); ++i) l.references += (i ? ", " : "") + c.references[i];
  }
  l.closing = "Kind regards,";
  l.signature = lines(o.signature.empty() ? o.sender : o.signature);
  return l;
}

std::string letterMarkdown(const Letter& l) {
  std::string out;
  if (!l.sender.empty()) out += "**" + markdownText(l.sender) + "**\n\n";
  out += markdownText(l.date) + "\n\n";
  if (!l.reference.empty()) out += markdownText(l.reference) + "\n\n";
  out += "## " + markdownText(l.title) + "\n\n" + markdownText(l.greeting) + "\n\n" + markdownText(l.summary) + "\n\n";
  out += "### What happened\n\n";
  for (const auto& line : l.timeline) out += "- **" + markdownText(line.when) + "** — " + markdownText(line.text) + "\n";
  out += "\n### What we will do\n\n" + markdownText(l.action) + "\n\n";
  if (!l.advice.empty()) out += markdownText(l.advice) + "\n\n";
  if (!l.references.empty()) out += markdownText(l.references) + "\n\n";
  out += markdownText(l.closing) + "\n\n";
  for (std::size_t i = 0; i < l.signature.size(); ++i)
    out += markdownText(l.signature[i]) + (i + 1 < l.signature.size() ? "  \n" : "\n");
  return out;
}

}  // namespace idem::explain
