// The enforcer's entry points for a server that parks no thread on the store: begin() and
// complete() made from a statement sent without waiting (core/store/asynckeybatches.h), where one
// statement decides — a new key's claim, a response stored under a lease still held. Everything
// else (a key seen here, a conflict, a lost lease, a store failure) goes back to the blocking
// calls, which decide it exactly as before: the two paths share prepare() and conclude().
#include <stdexcept>

#include "core/enforce/enforcer.h"
#include "core/enforce/enforcer_support.h"

namespace idem::enforce {
using detail::Clock;

bool Enforcer::beginWithoutWaiting(const Request& req, const PolicyPtr& snapshot, ConflictWait& wait,
                                   const DecidedWithoutWaiting& done) {
  if (!snapshot) throw std::invalid_argument("Enforcer::beginWithoutWaiting: no policy snapshot");
  if (!m_store.writesWithoutWaiting() || wait.freshTried) return false;
  const policy::Policy::Match match = snapshot->policy.match(req.method, req.path);
  // The rollout (observe) and a tier's durability refusal are begin()'s to decide.
  if (match.tier == nullptr || match.tier->observed() || m_durability.check(*match.tier, snapshot->policy.docsUrl))
    return false;
  auto claim = std::make_shared<Claim>();
  auto decided = [route = std::string(match.route), &wait, done](Decision d) {
    d.route = route;
    wait.slot.reset();
    done(std::move(d));
  };
  if (auto refusedOrReplayed = prepare(req, snapshot, match, wait, *claim, /*withoutWaiting=*/true)) {
    decided(std::move(*refusedOrReplayed));
    return true;
  }
  if (!claim->ready) return false;  // a key the store reads first: begin()'s
  if (claim->pending) {  // its record waits in the backlog, here in memory
    decided(conclude(*claim, snapshot, match, fromBacklog(*claim->pending, claim->request.fingerprint), {},
                     Clock::now()));
    return true;
  }
  const auto sentAt = Clock::now();
  return m_store.claimWithoutWaiting(
      claim->request, [this, claim, snapshot, match, sentAt, &wait, done, decided](
                          std::optional<store::ClaimResult> claimed, const std::exception_ptr& error) {
        if (!claimed) {
          // Not claimed as new (a row, history, the same key twice in one batch): the read decides.
          // Failed: begin() tries again, and answers 503 if the store is away.
          wait.freshTried = !error;
          return done(std::nullopt);
        }
        std::optional<Decision> d;
        try {
          d = conclude(*claim, snapshot, match, std::move(*claimed), {}, sentAt);
        } catch (const std::exception& e) {
          // The key is claimed and nobody holds its ticket: begin() reads it (its own processing
          // row: 409 until the lease ends, then a retry takes it over). Never an execution twice.
          m_log("deciding " + claim->request.scope.endpoint + " key " + claim->request.scope.key +
                " after its claim failed: " + e.what());
          wait.freshTried = true;
          return done(std::nullopt);
        }
        decided(std::move(*d));
      });
}

bool Enforcer::completeWithoutWaiting(Ticket& ticket, Response&& response, const CompleteOptions& options,
                                      const CompletedWithoutWaiting& done) {
  if (!ticket.m_open) throw std::logic_error("Enforcer::completeWithoutWaiting: the ticket has already ended");
  if (!options.sameTransaction.empty() || !m_store.writesWithoutWaiting()) return false;
  const bool success = response.status >= 200 && response.status < 300;
  // An answer the tier does not store releases the key: complete()'s.
  if (ticket.tier().cache == policy::CacheRule::SuccessOnly && !success && !options.outcomeUnknown) return false;
  auto request = std::make_shared<store::CompleteRequest>(completionOf(ticket, response, options));
  auto held = std::make_shared<Response>(std::move(response));
  const bool outcomeUnknown = options.outcomeUnknown;
  return m_store.completeWithoutWaiting(
      *request, [this, &ticket, request, held, outcomeUnknown, done](std::optional<store::CompleteResult> stored_,
                                                                     const std::exception_ptr& error) {
        if (!stored_ || error) return done(false, std::move(*held));
        CompleteOptions recorded;
        recorded.outcomeUnknown = outcomeUnknown;
        done(true, stored(ticket, std::move(*held), executionOf(ticket, std::move(*request), recorded), *stored_, 1, {}));
      });
}

}  // namespace idem::enforce
