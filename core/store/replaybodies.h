#pragma once
// Stored answers on their way to clients, bounded across requests (issue 28 #10). A replay's body
// lives in this process from the store's read (or the replay cache) until the client has read the
// answer — for a slow client, seconds. Without a bound, 60 concurrent replays of a 15 MiB answer
// held 1.3 GiB, and their reads took every store connection from other tenants' requests. So:
//  - one byte budget for every replay body in flight (`maxBytes`); a replay that does not fit is
//    answered 503 + Retry-After at once (nothing waits on a thread, nothing is read);
//  - a body over kInlineReplayBody is not sent with the replay's first read: its bytes are taken
//    from the budget first (large bodies may fill 3/4 of it, the rest stays for small answers),
//    then it is read on its own statement by at most `maxLargeReads` connections at a time, so
//    small requests always find a store connection.
// Thread-safe. A Hold gives its bytes back when the last copy is dropped (the transport drops it
// once the answer is written).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

namespace idem::store {

/// Bodies up to this size come with the replay's first read; larger ones are read on their own,
/// under the budget and the large-read slots.
inline constexpr std::size_t kInlineReplayBody = 256 * 1024;

struct ReplayBodyOptions {
  std::size_t maxBytes = std::size_t{64} << 20;  // every replay body held at once
  int maxLargeReads = 1;                         // store connections reading large bodies at once
  std::chrono::milliseconds slotWait{5000};      // how long a large read waits for a slot
};

class ReplayBodies {
 public:
  using Hold = std::shared_ptr<const void>;

  explicit ReplayBodies(ReplayBodyOptions options = {});
  ReplayBodies(const ReplayBodies&) = delete;
  ReplayBodies& operator=(const ReplayBodies&) = delete;

  /// Takes `bytes` for one replay's body; nullptr (nothing taken, a refusal counted) when they do
  /// not fit. A large body may use 3/4 of the budget, a small one all of it; a body over that
  /// goes when the budget is empty.
  [[nodiscard]] Hold take(std::size_t bytes, bool large);

  /// One of the large-read slots while it lives; waits up to `slotWait` for one (reads are short).
  /// Waits run on handler threads: beyond kWaitersPerSlot waiting per slot, none is waited for.
  class ReadSlot {
   public:
    explicit ReadSlot(ReplayBodies& owner);
    ReadSlot(const ReadSlot&) = delete;
    ReadSlot& operator=(const ReadSlot&) = delete;
    ~ReadSlot();
    /// false: no slot freed within slotWait (counted as a refusal).
    [[nodiscard]] bool held() const { return m_held; }

   private:
    ReplayBodies& m_owner;
    bool m_held = false;
  };

  static constexpr int kWaitersPerSlot = 4;

  struct Stats {
    std::size_t bytes = 0;  // held now
    std::size_t maxBytes = 0;
    int largeReads = 0;  // store connections reading a large body now
    int maxLargeReads = 0;
    int waiting = 0;  // replays waiting for a read slot now
    long long refused = 0;      // replays answered 503 for want of room (bytes or a slot)
    long long largeBodies = 0;  // large bodies read on their own statement
  };
  [[nodiscard]] Stats stats() const;
  [[nodiscard]] const ReplayBodyOptions& options() const { return m_options; }

 private:
  const ReplayBodyOptions m_options;
  // Shared with every Hold: an answer still being written when the server shuts down may drop
  // its hold after this object is gone.
  std::shared_ptr<std::atomic<std::size_t>> m_bytes = std::make_shared<std::atomic<std::size_t>>(0);
  std::atomic<long long> m_refused{0};
  std::atomic<long long> m_largeBodies{0};
  mutable std::mutex m_mutex;  // the slots
  std::condition_variable m_slotFree;
  int m_largeReads = 0;
  int m_waiting = 0;
};

}  // namespace idem::store
