#include "core/enforce/completionbacklog.h"

#include <vector>

namespace idem::enforce {
namespace {

constexpr auto kAttemptEvery = std::chrono::milliseconds(250);

std::string where(const store::Scope& s) {
  return s.endpoint + " key " + s.key + " (tenant \"" + s.tenant + "\")";
}

}  // namespace

CompletionBacklog::CompletionBacklog(store::KeyStore& store, LeaseKeeper& leases, Stored stored, Log log,
                                     BacklogLimits limits)
    : m_store(store), m_leases(leases), m_stored(std::move(stored)), m_log(std::move(log)), m_limits(limits) {}

CompletionBacklog::~CompletionBacklog() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
  flushOnce();
  for (const auto& [scope, p] : m_pending) {
    m_leases.drop(p.request.leaseToken);
    m_log("completion of " + where(p.request.scope) +
          " was never stored (the process is stopping and the store still refuses it); the key stays processing "
          "until its lease ends, and a retry then runs the work again");
  }
}

bool CompletionBacklog::adopt(PendingCompletion pending) {
  {
    std::lock_guard lock(m_mutex);
    const std::size_t bytes = pending.request.response.body.size();
    if (m_pending.size() >= m_limits.entries || m_bodyBytes + bytes > m_limits.bodyBytes) return false;
    // One lease holder per key, so one record per scope; were there an older one, the newer wins.
    if (auto old = m_pending.find(keyOf(pending.request.scope)); old != m_pending.end()) {
      m_bodyBytes -= old->second.request.response.body.size();
      m_pending.erase(old);
    }
    m_pending.emplace(keyOf(pending.request.scope), std::move(pending));
    m_bodyBytes += bytes;
    m_count.store(m_pending.size(), std::memory_order_release);
    if (!m_thread.joinable()) m_thread = std::thread([this] { run(); });
  }
  m_wake.notify_all();
  return true;
}

std::optional<PendingCompletion> CompletionBacklog::find(const store::Scope& scope) const {
  if (m_count.load(std::memory_order_acquire) == 0) return std::nullopt;  // the common case: no lock
  std::lock_guard lock(m_mutex);
  auto it = m_pending.find(keyOf(scope));
  if (it == m_pending.end()) return std::nullopt;
  return it->second;
}

std::size_t CompletionBacklog::size() const { return m_count.load(std::memory_order_acquire); }

long long CompletionBacklog::storedLate() const {
  std::lock_guard lock(m_mutex);
  return m_storedLate;
}

void CompletionBacklog::run() {
  std::unique_lock lock(m_mutex);
  while (!m_stopping) {
    m_wake.wait_for(lock, kAttemptEvery, [&] { return m_stopping; });
    if (m_stopping || m_pending.empty()) continue;
    lock.unlock();
    flushOnce();
    lock.lock();
  }
}

void CompletionBacklog::flushOnce() {
  std::vector<PendingCompletion> batch;
  {
    std::lock_guard lock(m_mutex);
    for (const auto& [scope, p] : m_pending) batch.push_back(p);
  }
  for (const auto& p : batch) {
    const auto age = Clock::now() - p.ranAt;
    std::optional<store::CompleteResult> done;
    bool giveUp = age > m_limits.maxAge;
    if (!giveUp) {
      try {
        done = m_store.complete(p.request);
      } catch (const std::exception&) {
        continue;  // still away: the next round tries again
      }
    }
    {
      std::lock_guard lock(m_mutex);
      auto it = m_pending.find(keyOf(p.request.scope));
      if (it == m_pending.end() || it->second.request.leaseToken != p.request.leaseToken) continue;
      m_bodyBytes -= it->second.request.response.body.size();
      m_pending.erase(it);
      m_count.store(m_pending.size(), std::memory_order_release);
      if (done && done->stored) ++m_storedLate;
    }
    m_leases.drop(p.request.leaseToken);
    const long long seconds = std::chrono::duration_cast<std::chrono::seconds>(age).count();
    if (giveUp) {
      m_log("completion of " + where(p.request.scope) + " given up after " + std::to_string(seconds) +
            " s of store failures; the key stays processing until its lease ends");
    } else if (done->stored) {
      m_stored(p, *done,
               "stored " + std::to_string(seconds) + " s after the work ran, from the completion backlog (the store "
               "refused it until then)");
    } else {
      // The lease lapsed and a retry elsewhere took the key over before the store came back:
      // the store traces that as lease_lost; the operator must hear that the work may have
      // run twice.
      m_log("completion of " + where(p.request.scope) +
            " could not be stored: its lease was taken over while the store was unreachable; the work may have run "
            "twice");
    }
  }
}

}  // namespace idem::enforce
