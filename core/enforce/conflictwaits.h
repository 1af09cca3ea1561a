#pragma once
// Requests waiting for their key's original to finish (on_conflict "wait:<d>", docs/behaviour.md
// "Waiting for the original"), counted so their number stays bounded. A waiter holds no thread
// (a server re-asks the store from a timer), but each one re-reads its key up to four times a
// second: the bounds keep that polling a small, fixed share of the store's work, whatever a
// client's retry loop sends. Thread-safe.
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace idem::enforce {

struct ConflictWaitBounds {
  /// Waiters of one key. More retries of one key learn nothing more (they all get the same
  /// replay) and would multiply the reads of one row.
  int perKey = 16;
  /// Waiters in all: at most ~4 store reads a second each.
  int total = 256;
};

class ConflictWaits {
 public:
  /// A waiter's place; it leaves when the slot goes.
  class Slot {
   public:
    Slot(ConflictWaits& owner, std::string id) : m_owner(&owner), m_id(std::move(id)) {}
    Slot(Slot&& other) noexcept : m_owner(std::exchange(other.m_owner, nullptr)), m_id(std::move(other.m_id)) {}
    Slot& operator=(Slot&& other) noexcept {
      std::swap(m_owner, other.m_owner);
      std::swap(m_id, other.m_id);
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (m_owner) m_owner->leave(m_id);
    }

   private:
    ConflictWaits* m_owner;
    std::string m_id;
  };

  void setBounds(ConflictWaitBounds bounds);
  /// A place for one more waiter of key `id`; nullopt when a bound is reached.
  [[nodiscard]] std::optional<Slot> enter(const std::string& id);
  [[nodiscard]] int waiting() const;
  /// Requests answered 409 at once because a bound was reached.
  [[nodiscard]] long long refused() const;

 private:
  void leave(const std::string& id);

  mutable std::mutex m_mutex;
  ConflictWaitBounds m_bounds;
  std::unordered_map<std::string, int> m_perKey;
  int m_total = 0;
  long long m_refused = 0;
};

/// One request's wait: when it began (the wait's bound and the request's latency count from
/// there), how often the store said "still running", and its place among the waiters.
struct ConflictWait {
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  int polls = 0;
  std::optional<ConflictWaits::Slot> slot;
  /// Ask once more and do not wait again (the server is stopping): a conflict is a 409 now.
  bool lastLook = false;
  /// The key's fresh claim was made without waiting (Enforcer::beginWithoutWaiting) and claimed
  /// nothing: the store's read decides it, without a second try.
  bool freshTried = false;
};

}  // namespace idem::enforce
