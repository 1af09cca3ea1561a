// The scenarios that need time: two requests of one key side by side, and a key past its TTL.
#include <chrono>
#include <thread>

#include "core/conform/scenarios.h"

namespace idem::conform {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The second request leaves this long after the first, so the first is the one that executes.
constexpr milliseconds kStagger{150};
// Longest TTL the expiry scenario waits out.
constexpr milliseconds kLongestWait{60'000};

}  // namespace

void concurrent(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto& o = probe.options();
  const Route route = o.slowRoute.value_or(o.route);
  const auto key = probe.newKey(out.name);
  const auto body = probe.body(out.name);
  auto headers = probe.headers(key);
  headers.insert(headers.end(), o.slowHeaders.begin(), o.slowHeaders.end());
  const auto mark = probe.mark();

  Exchange first;
  Clock::time_point firstDone;
  std::thread side([&] {
    first = probe.sendAlone("first", route, headers, body);
    firstDone = Clock::now();
  });
  std::this_thread::sleep_for(kStagger);
  const auto secondSent = Clock::now();
  Exchange second = probe.sendAlone("second, while the first runs", route, headers, body);
  side.join();
  probe.reached({first, second});
  out.exchanges = {first, second};
  if (!answered(out, first) || !answered(out, second)) return;
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  if (firstDone <= secondSent && *n <= 1)
    return verdict(out, Verdict::Skip,
                   "the first answer came back " + brief(first).substr(4) +
                       ", before the second request left: the route is too fast to race; give --slow-route or "
                       "--slow-header (a delay your service honours)");
  const bool firstRefused = first.status == 409, secondRefused = second.status == 409;
  if (*n > 1)
    return verdict(out, Verdict::Fail,
                   "executed " + std::to_string(*n) + " times: " + brief(first) + " and " + brief(second) + " (" +
                       idOf(probe, first) + ", " + idOf(probe, second) + ")");
  if (firstRefused != secondRefused && (succeeded(first) || succeeded(second)))
    return verdict(out, Verdict::Pass,
                   std::string(secondRefused ? "the second" : "the first") + " got 409 while the other ran (" +
                       brief(first) + ", " + brief(second) + "); one execution");
  if (succeeded(first) && succeeded(second) && first.status == second.status &&
      first.responseBody == second.responseBody && firstDone > secondSent)
    return verdict(out, Verdict::Pass,
                   "the second waited " + std::to_string(static_cast<long>(second.ms)) +
                       " ms and replayed the first's answer; one execution (the draft's answer is 409; "
                       "waiting keeps the one execution it is there for)");
  verdict(out, Verdict::Fail,
          "expected one 2xx and one 409 (or a wait and a replay), got " + brief(first) + " and " + brief(second));
}

void expiry(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto& o = probe.options();
  if (!o.ttl) return verdict(out, Verdict::Skip, "no --ttl: give the TTL the service publishes for the route");
  if (*o.ttl > kLongestWait)
    return verdict(out, Verdict::Skip,
                   "the TTL is longer than the kit waits (60 s): point --expiry-route at a route with a short TTL");
  const Route route = o.expiryRoute.value_or(o.route);
  const auto key = probe.newKey(out.name);
  const auto body = probe.body(out.name);
  const auto mark = probe.mark();
  sendInto(out, probe, "first", route, probe.headers(key), body);
  if (!firstSucceeds(out, out.exchanges[0])) return;
  // Past the TTL by half of it (at least a second): a TTL counted from the answer, rounded to
  // the second as Idempotency-Expires is, is over by then.
  const auto margin = std::max(milliseconds(1000), *o.ttl / 2);
  std::this_thread::sleep_for(*o.ttl + margin);
  const auto waited = std::chrono::duration_cast<milliseconds>(*o.ttl + margin).count();
  sendInto(out, probe, "after " + std::to_string(waited) + " ms", route, probe.headers(key), body);
  const auto& first = out.exchanges[0];
  const auto& again = out.exchanges[1];
  if (!answered(out, again)) return;
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  const bool executedAgain = succeeded(again) && *n == 2;
  const bool refused = again.status >= 400 && again.status < 500 && again.status != 409 && *n == 1;
  const bool replayed = succeeded(again) && *n == 1;
  const std::string when = "after " + std::to_string(waited) + " ms (TTL " + std::to_string(o.ttl->count()) + " ms)";
  if (replayed)
    return verdict(out, Verdict::Fail,
                   "still replayed " + when + ": the key is kept longer than the TTL given (" + idOf(probe, first) +
                       "); the policy the service publishes is not the one it keeps");
  if (executedAgain && o.afterExpiry != AfterExpiry::Reject)
    return verdict(out, Verdict::Pass, "executed again " + when + " (" + idOf(probe, again) + ")");
  if (refused && o.afterExpiry != AfterExpiry::Execute)
    return verdict(out, Verdict::Pass, "refused " + when + " with " + brief(again) + "; nothing executed");
  verdict(out, Verdict::Fail,
          std::string(o.afterExpiry == AfterExpiry::Execute ? "expected a new execution" : "expected a 4xx refusal") +
              " " + when + ", got " + brief(again) + " and " + std::to_string(*n) + " execution(s) in all");
}

}  // namespace idem::conform
