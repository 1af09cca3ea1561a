// The enforcer's second half: storing what an execution answered (with retries and the
// completion backlog), freeing or releasing a key, and a ticket abandoned mid-request. The first
// half, deciding a request, is enforcer.cpp.
#include <algorithm>
#include <iostream>
#include <thread>

#include "core/enforce/enforcer.h"
#include "core/enforce/enforcer_support.h"

namespace idem::enforce {
using detail::allowedOnReplay;
using detail::Clock;
using detail::describe;
using detail::msSince;

std::optional<store::CompleteResult> Enforcer::completeWithRetry(const store::CompleteRequest& q,
                                                                 const CompleteOptions& options, int& attempts,
                                                                 std::string& failure) {
  const bool sideStatements = !options.sameTransaction.empty();
  const auto giveUpAt = Clock::now() + m_retry.total;
  auto backoff = m_retry.firstBackoff;
  for (attempts = 1;; ++attempts) {
    std::optional<store::CompleteResult> done;
    try {
      done = m_store.complete(q, options.sameTransaction);
    } catch (const pg::QueryError& e) {
      // A side statement's own error (a constraint) repeats on every attempt: the caller's.
      if (sideStatements && !e.transient()) throw;
      failure = describe(e);
    } catch (const pg::Unavailable& e) {
      failure = e.what();
    }
    if (done) return done;
    const auto now = Clock::now();
    if (now + backoff > giveUpAt) return std::nullopt;
    // The lease keeper goes on renewing the lease meanwhile (the ticket is held until this
    // returns), so no retry takes the key over while this process holds a response to record.
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, m_retry.maxBackoff);
  }
}

store::CompleteRequest Enforcer::completionOf(const Ticket& ticket, const Response& response,
                                              const CompleteOptions& options) const {
  store::CompleteRequest q;
  q.scope = ticket.m_scope;
  q.leaseToken = ticket.m_leaseToken;
  q.response.status = response.status;
  for (const auto& h : response.headers)
    if (allowedOnReplay(ticket.tier(), h.first)) q.response.headers.push_back(h);
  q.response.body = response.body;
  q.resourceRef = options.resourceRef;
  q.latencyMs = msSince(ticket.m_started);
  q.requestId = ticket.m_requestId;
  return q;
}

PendingCompletion Enforcer::executionOf(const Ticket& ticket, store::CompleteRequest request,
                                       const CompleteOptions& options) {
  return {std::move(request), ticket.m_fingerprint, ticket.m_generation, ticket.m_expiresAt,
          ticket.m_started,   ticket.tier().name,   ticket.m_afterExpiry, ticket.m_abandoned,
          options.outcomeUnknown, options.notRunAfterTakeover};
}

Response Enforcer::stored(Ticket& ticket, Response response, const PendingCompletion& execution,
                          const store::CompleteResult& done, int attempts, const std::string& failure) {
  ticket.m_open = false;
  m_leases.drop(ticket.m_leaseToken);
  std::string note;
  if (attempts > 1) {
    note = "stored after " + std::to_string(attempts) + " attempts (" + failure + ")";
    m_log("completion of " + ticket.m_scope.endpoint + " key " + ticket.m_scope.key + " (tenant \"" +
          ticket.m_scope.tenant + "\") " + note);
  }
  traceExecution(execution, done, note);
  ticket.m_end = Ticket::End::Stored;
  addKeyHeaders(response, ticket.m_scope.key, done.expiresAt);
  return response;
}

Response Enforcer::complete(Ticket& ticket, Response response, const CompleteOptions& options) {
  if (!ticket.m_open) throw std::logic_error("Enforcer::complete: the ticket has already ended");
  const bool success = response.status >= 200 && response.status < 300;
  if (ticket.tier().cache == policy::CacheRule::SuccessOnly && !success && !options.outcomeUnknown) {
    ticket.m_open = true;
    return release(ticket, std::move(response), "not stored: the tier caches 2xx responses only");
  }
  store::CompleteRequest q = completionOf(ticket, response, options);
  int attempts = 0;
  std::string failure;
  // Empty: the store failed on every attempt.
  // Throws only what the caller's side statements caused; the ticket stays open for release().
  const std::optional<store::CompleteResult> done = completeWithRetry(q, options, attempts, failure);
  ticket.m_open = false;
  const std::string& key = ticket.m_scope.key;
  const std::string where = ticket.m_scope.endpoint + " key " + key + " (tenant \"" + ticket.m_scope.tenant + "\")";
  PendingCompletion execution = executionOf(ticket, std::move(q), options);
  if (!done && options.sameTransaction.empty()) {
    // The work ran and its record could not be written yet: the backlog keeps it (and the
    // lease) until the store takes it. Only a full backlog loses it, and says so loudly.
    if (m_backlog.adopt(execution)) {
      m_log("completion of " + where + " not stored after " + std::to_string(attempts) + " attempts (" + failure +
            "); kept in the completion backlog until the store takes it");
      ticket.m_end = Ticket::End::Pending;
      addKeyHeaders(response, key, ticket.m_expiresAt);
      return response;
    }
  }
  if (done && done->stored) return stored(ticket, std::move(response), execution, *done, attempts, failure);
  m_leases.drop(ticket.m_leaseToken);
  if (options.sameTransaction.empty()) {
    if (!done) {
      // The backlog is full: the work ran and its record is lost. The key stays processing
      // until its lease ends; a retry after that would run the work again.
      const std::string note = "response not stored after " + std::to_string(attempts) + " attempts (" + failure +
                               ") and the completion backlog is full; the key stays processing until its lease ends";
      m_log("completion of " + where + " failed: " + note);
      store::CompleteResult unknown;
      unknown.generation = ticket.m_generation;
      traceExecution(execution, unknown, note);
    }
    // Lease taken over (traced as lease_lost by the store), or the store failed: pass the
    // handler's answer on.
    ticket.m_end = done ? Ticket::End::LeaseLost : Ticket::End::Unrecorded;
    addKeyHeaders(response, key, ticket.m_expiresAt);
    return response;
  }
  // Every attempt failed. The last one may have failed before its COMMIT reached the server
  // (rolled back with its side effects) or after the server committed it (the answer was lost):
  // which, nobody here knows. Freeing the key is safe either way (a committed key is done, and
  // release leaves it alone); the answer must not claim that nothing ran.
  if (!done) {
    m_log("completion of " + where + " with its side statements failed after " + std::to_string(attempts) +
          " attempts (" + failure + "); outcome unknown: committed or rolled back");
    freeKey(ticket, 503, "store failed while committing; outcome unknown");
    ticket.m_end = Ticket::End::OutcomeUnknown;
    return storeTrouble(ticket.policy().policy.docsUrl, key,
                        "The idempotency store failed while committing this request, so whether it was executed is "
                        "not known. Retry with the same key: the retry returns the stored result if it was "
                        "committed, and runs it once if it was not.");
  }
  ticket.m_end = Ticket::End::LeaseLost;
  Response r = makeProblem(Problem::RequestInProgress, ticket.policy().policy.docsUrl,
                           "This request's lease on the key expired and a retry took it over; its result was not "
                           "committed. Retry with the same key to get the outcome.",
                           key);
  r.headers.emplace_back("Retry-After", "1");
  addKeyHeaders(r, key, ticket.m_expiresAt);
  return r;
}

void Enforcer::freeKey(const Ticket& ticket, int status, const std::string& reason) {
  try {
    m_store.release(ticket.m_scope, ticket.m_leaseToken, status, ticket.m_requestId, reason);
  } catch (const pg::Error& e) {
    // The processing row stays until its lease expires; a retry then takes it over. Nothing
    // ran, so that is safe; the operator hears why the key was not freed at once.
    m_log("release of " + ticket.m_scope.endpoint + " key " + ticket.m_scope.key + " failed: " + describe(e));
  }
}

void Enforcer::abandon(Ticket& ticket) noexcept {
  ticket.m_abandoned = true;
  const std::string where = ticket.m_scope.endpoint + " key " + ticket.m_scope.key;
  try {
    if (ticket.tier().cache == policy::CacheRule::SuccessOnly) {
      // Only successes are stored on this tier, and this is none: the key is free again.
      (void)release(ticket, Response{500, {}, ""}, "abandoned: the ticket was dropped without complete or release");
    } else {
      // Execution may have started (Stripe's rule stores a 500 then): a retry replays this
      // answer instead of running the work a second time.
      (void)complete(ticket, makeProblem(Problem::ExecutionAbandoned, ticket.policy().policy.docsUrl,
                                         "Processing stopped after execution started, so the operation may have "
                                         "taken effect. This answer is stored: retries with this key get it. Check "
                                         "the operation's outcome before using a new key.",
                                         ticket.m_scope.key));
    }
    m_log("abandoned ticket for " + where + " ended by the " +
          std::string(policy::cacheRuleName(ticket.tier().cache)) + " rule");
  } catch (const std::exception& e) {
    try {
      m_log("abandoned ticket for " + where + " could not be ended: " + e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  ticket.m_open = false;
  // Whatever happened above, nothing keeps this key alive now — unless its record waits in the
  // backlog, which needs the lease until the store takes it.
  const auto waiting = m_backlog.find(ticket.m_scope);
  if (!waiting || waiting->request.leaseToken != ticket.m_leaseToken) m_leases.drop(ticket.m_leaseToken);
}

void Enforcer::traceExecution(const PendingCompletion& execution, const store::CompleteResult& done,
                              const std::string& note) {
  const store::CompleteRequest& q = execution.request;
  trace::Event e;
  e.atMs = done.now;
  e.tenant = q.scope.tenant;
  e.endpoint = q.scope.endpoint;
  e.key = q.scope.key;
  e.generation = done.generation;
  e.tier = execution.tier;
  e.outcome = execution.outcomeUnknown ? trace::Outcome::OutcomeUnknown
              : execution.afterExpiry  ? trace::Outcome::ExecutedAfterExpiry
                                       : trace::Outcome::Executed;
  e.fingerprint = execution.fingerprint;
  e.status = q.response.status;
  e.latencyMs = q.latencyMs;
  e.requestId = q.requestId;
  // Support starts from the id the customer quotes; what went wrong on the way follows it.
  std::string detail = q.resourceRef.value_or("");
  if (execution.abandoned) detail = "abandoned: stored a 500 after execution started";
  if (execution.notRunAfterTakeover) detail = store::kNotRunAfterTakeover;
  if (!note.empty()) detail += (detail.empty() ? "" : "; ") + note;
  e.detail = detail;
  e.execution = true;
  m_trace.record(e);
}

store::ClaimResult Enforcer::fromBacklog(const PendingCompletion& pending, const std::string& fingerprint) const {
  store::ClaimResult r;
  r.generation = pending.generation;
  r.expiresAt = pending.expiresAtMs;
  r.now = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count();
  if (pending.fingerprint != fingerprint) {
    r.decision = store::Decision::Mismatch;
  } else {
    r.decision = store::Decision::Replay;
    r.stored = pending.request.response;
  }
  return r;
}

Response Enforcer::release(Ticket& ticket, Response response, const std::string& reason) {
  if (!ticket.m_open) throw std::logic_error("Enforcer::release: the ticket has already ended");
  ticket.m_open = false;
  ticket.m_end = Ticket::End::Released;
  m_leases.drop(ticket.m_leaseToken);
  freeKey(ticket, response.status, reason);
  addKeyHeaders(response, ticket.m_scope.key, std::nullopt);
  return response;
}

}  // namespace idem::enforce
