#pragma once
// The write path of new keys for callers that park no thread on the store (issue 30, item 4).
// The batches are KeyBatches' (keybatches.h): fresh claims that arrive while every slot has a
// statement in flight go together in the next one, completions likewise; each key keeps its own
// answer; a failing statement is split down to the key that fails it; every answer is given after
// its batch committed. What differs is who waits: nobody. The statements go out on connections an
// event loop drives (pg::AsyncConnection), and a caller is called back when its batch committed.
// The callbacks of one batch all run before the next batch is gathered, so what they queue (the
// claimed keys' completions, the next requests) rides in it together instead of trickling in as
// threads wake one by one.
#include <boost/asio/any_io_executor.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/store/keystore.h"

namespace idem::store {

class AsyncKeyBatches {
 public:
  /// nullopt: the key was not claimed as new (a live row, history, the same key twice in one
  /// batch): it decides alone, as KeyBatches::claimFresh's nullopt. `error`: what its statement
  /// threw (pg::Unavailable, pg::QueryError).
  using Claimed = std::function<void(std::optional<ClaimResult> claimed, std::exception_ptr error)>;
  /// nullopt: the key is not processing under this token (its own earlier commit, or a lost lease).
  using Completed = std::function<void(std::optional<CompleteResult> stored, std::exception_ptr error)>;

  /// Statements go to `conninfo` on connections of its own, at most one per batch in flight (each
  /// lane up to the in-flight limit, as KeyBatches). Everything runs on a strand of `executor`,
  /// the callbacks too; they must not throw.
  AsyncKeyBatches(const boost::asio::any_io_executor& executor, std::string conninfo, WriteBatching batching = {});
  /// stop().
  ~AsyncKeyBatches();
  AsyncKeyBatches(const AsyncKeyBatches&) = delete;
  AsyncKeyBatches& operator=(const AsyncKeyBatches&) = delete;

  /// Thread-safe. `done` runs once, on the executor's strand.
  void claimFresh(ClaimRequest request, Claimed done);
  /// Thread-safe. `done` runs once, on the executor's strand. A completion is not resent on a
  /// connection that broke (the caller's retry decides, as KeyBatches::complete).
  void complete(CompleteRequest request, Completed done);
  /// Closes the connections; what was not answered yet ends with pg::Unavailable, on the strand
  /// (while the executor still runs). Later calls are answered so at once. Thread-safe.
  void stop();

  [[nodiscard]] WriteBatchStats stats() const;

  struct State;

 private:
  std::shared_ptr<State> m_state;  // shared with the statements in flight, which may outlive this
};

}  // namespace idem::store
