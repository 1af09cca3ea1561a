#include "core/store/asynckeybatches.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <atomic>
#include <deque>
#include <span>
#include <vector>

#include "core/store/asyncconnection.h"
#include "core/store/inflighttuner.h"
#include "core/store/keybatches.h"
#include "core/store/keysql.h"

namespace idem::store {
namespace asio = boost::asio;
using namespace sql;

namespace {


// One count of statements in flight for both kinds (claims and completions), where KeyBatches
// keeps one per kind: `inFlight` fixed means that many of each, so twice that in all (at most
// 2 × kWriteBatchesInFlight: the connections the host reserves for it).
//
// Adapting, it leans the other way from KeyBatches' lanes. Every key waiting is spread over the
// statements in flight (State::pump), so all of them ride each flush whatever the count: a slow
// flush no longer asks for more in flight. What more in flight buys is server processes working
// at once; what it costs is smaller batches, more work a key. So it starts at two (one of each
// kind), and goes up only when that wins by 5 %, down when it does not lose 2 %.
InFlightTuner tunerFor(const WriteBatching& b) {
  if (b.inFlight > 0) return InFlightTuner::fixed(std::min(2 * b.inFlight, 2 * kWriteBatchesInFlight));
  InFlightTuner::Settings s;
  s.min = 2;
  s.max = 2 * kWriteBatchesInFlight;
  s.start = 2;
  s.downGain = -0.02;
  s.upLoss = -0.05;
  return InFlightTuner(s);
}

struct ClaimJob {
  long long arrived = 0;  // the order jobs of both kinds were handed over in
  ClaimRequest request;
  AsyncKeyBatches::Claimed done;
  std::optional<ClaimResult> claimed;
  std::exception_ptr error;
  bool resent = false;  // once after a reused connection broke, as Pool::withRetry
  [[nodiscard]] const Scope& scope() const { return request.scope; }
  [[nodiscard]] static std::size_t weight(const ClaimJob&) { return 1; }
  void answer() { done(std::move(claimed), error); }
};

struct CompletionJob {
  long long arrived = 0;
  CompleteRequest request;
  AsyncKeyBatches::Completed done;
  std::optional<CompleteResult> stored;
  std::exception_ptr error;
  [[nodiscard]] const Scope& scope() const { return request.scope; }
  [[nodiscard]] static std::size_t weight(const CompletionJob& j) { return j.request.response.body.size() + 256; }
  void answer() const { done(stored, error); }
};

template <typename Job>
using Batch = std::vector<std::shared_ptr<Job>>;

template <typename Job>
struct Lane {
  Lane(std::size_t jobs, std::size_t weight) : maxJobs(jobs), maxWeight(weight) {}
  std::deque<std::shared_ptr<Job>> queue;  // oldest first
  std::deque<Batch<Job>> again;            // halves of a split batch, and resent batches: first
  std::size_t keysInFlight = 0;
  std::size_t maxJobs, maxWeight;
  std::atomic<long long> batches{0}, keys{0}, waiting{0};

  [[nodiscard]] bool hasWork() const { return !queue.empty() || !again.empty(); }
  /// When its next batch's oldest job arrived (a batch to send again goes first).
  [[nodiscard]] long long oldest() const { return !again.empty() ? -1 : queue.front()->arrived; }
  /// The next batch: a split batch's half first, else up to `share` of the queue.
  Batch<Job> next(std::size_t share) {
    if (!again.empty()) {
      Batch<Job> b = std::move(again.front());
      again.pop_front();
      return b;
    }
    Batch<Job> b;
    std::size_t load = 0;
    while (!queue.empty() && b.size() < std::min(share, maxJobs) && (b.empty() || load < maxWeight)) {
      load += Job::weight(*queue.front());
      b.push_back(std::move(queue.front()));
      queue.pop_front();
    }
    waiting = static_cast<long long>(queue.size());
    return b;
  }
};

/// A connection and whether it served a statement before (a reused one may have gone stale).
struct Link {
  std::shared_ptr<pg::AsyncConnection> conn;
  bool reused = false;
};

}  // namespace

struct AsyncKeyBatches::State : std::enable_shared_from_this<AsyncKeyBatches::State> {
  State(const asio::any_io_executor& executor, std::string target, WriteBatching batching)
      : strand(asio::make_strand(executor)), conninfo(std::move(target)), limit(tunerFor(batching)) {}

  asio::strand<asio::any_io_executor> strand;
  std::string conninfo;
  InFlightLimit limit;  // claims' and completions' alike, as KeyBatches
  Lane<ClaimJob> claims{kMaxClaimsPerBatch, kMaxClaimsPerBatch};
  Lane<CompletionJob> completions{kMaxCompletionsPerBatch, kMaxCompletionBytesPerBatch};
  std::vector<Link> idle;
  std::vector<std::weak_ptr<pg::AsyncConnection>> all;  // to close the busy ones on stop
  std::size_t opening = 0;
  std::size_t open = 0;  // connected or connecting
  std::size_t inFlight = 0;  // statements, of both kinds
  long long arrivals = 0;
  int answering = 0;         // a batch's callbacks are running: gather the next batch after them
  bool stopped = false;

  // --- on the strand ---

  template <typename Job>
  void submit(std::shared_ptr<Job> job, Lane<Job>& lane) {
    if (stopped) {
      job->error = std::make_exception_ptr(pg::Unavailable("the store's write path is stopping"));
      job->answer();
      return;
    }
    job->arrived = ++arrivals;
    lane.queue.push_back(std::move(job));
    lane.waiting = static_cast<long long>(lane.queue.size());
    pump();
  }

  void pump() {
    if (answering > 0 || stopped) return;
    const std::size_t most = limit.limit();
    bool spread = false;
    while (inFlight < most && (claims.hasWork() || completions.hasWork())) {
      if (idle.empty()) break;
      Link link = std::move(idle.back());
      idle.pop_back();
      // Every key in the process is spread over the statements the limit allows (those with a
      // connection to go on), so batches stay even: callers that arrive together (a batch's
      // callbacks hand over its keys' next writes at once) would otherwise move as one convoy —
      // one statement in flight, one server process busy, the others idle.
      const std::size_t keys = claims.queue.size() + completions.queue.size() + claims.keysInFlight +
                               completions.keysInFlight;
      const std::size_t statements = std::max<std::size_t>(1, std::min(most, open - opening));
      const std::size_t share = std::max<std::size_t>(1, (keys + statements - 1) / statements);
      spread = spread || share > 1;
      ++inFlight;
      // The kind whose oldest job waited longest goes first.
      const bool claimsFirst =
          !completions.hasWork() || (claims.hasWork() && claims.oldest() < completions.oldest());
      if (claimsFirst) send(std::move(link), claims.next(share));
      else send(std::move(link), completions.next(share));
    }
    // One more connection when work waits, or when the batches would spread over more; a lone
    // client keeps one.
    if ((spread || claims.hasWork() || completions.hasWork()) && open < most) openOne();
  }

  /// One more connection, while the lanes may have more in flight than are open. One at a
  /// time: each that opens pumps, and opens the next if still needed.
  void openOne() {
    if (opening > 0 || open >= 2 * kWriteBatchesInFlight || stopped) return;
    ++opening;
    ++open;
    all.push_back(pg::AsyncConnection::open(
        strand, conninfo, [self = shared_from_this()](const std::shared_ptr<pg::AsyncConnection>& c, const std::exception_ptr& e) {
          self->opened(c, e);
        }));
  }

  void opened(const std::shared_ptr<pg::AsyncConnection>& conn, const std::exception_ptr& error) {
    --opening;
    if (error || stopped) {
      --open;
      forget(conn);
      if (error && open == 0) failQueued(error);  // nothing else will come back to send them
      if (conn) conn->close();
      return;
    }
    idle.push_back({conn, false});
    pump();
  }

  void forget(const std::shared_ptr<pg::AsyncConnection>& conn) {
    std::erase_if(all, [&](const std::weak_ptr<pg::AsyncConnection>& w) {
      auto c = w.lock();
      return !c || c == conn;
    });
  }

  /// A connection whose statement came back: kept for the next batch, or dropped.
  void giveBack(Link link) {
    if (!stopped && link.conn->healthy() && !link.conn->retiring()) {
      link.reused = true;
      idle.push_back(std::move(link));
      return;
    }
    --open;
    forget(link.conn);
    link.conn->close();
  }

  /// The store cannot be reached: what waits fails now, as a pool that cannot connect does.
  void failQueued(const std::exception_ptr& error) {
    std::vector<std::shared_ptr<ClaimJob>> c;
    std::vector<std::shared_ptr<CompletionJob>> d;
    drain(claims, c);
    drain(completions, d);
    ++answering;
    for (auto& j : c) j->error = error, j->answer();
    for (auto& j : d) j->error = error, j->answer();
    --answering;
    pump();
  }

  template <typename Job>
  static void drain(Lane<Job>& lane, std::vector<std::shared_ptr<Job>>& out) {
    for (auto& b : lane.again)
      for (auto& j : b) out.push_back(std::move(j));
    lane.again.clear();
    for (auto& j : lane.queue) out.push_back(std::move(j));
    lane.queue.clear();
    lane.waiting = 0;
  }

  void send(Link link, Batch<ClaimJob> batch);
  void send(Link link, Batch<CompletionJob> batch);

  /// A statement came back: the connection goes back, and every job of the batch answers —
  /// unless the statement failed in a way a smaller batch (or a fresh connection) may not.
  template <typename Job, typename Read>
  void ended(Lane<Job>& lane, Link link, Batch<Job> batch, Batch<Job> sent, pg::AsyncConnection::Outcome out,
             Read read) {
    const bool reused = link.reused;
    giveBack(std::move(link));
    --inFlight;
    lane.keysInFlight -= batch.size();
    limit.batchEnded(batch.size());
    if (!out.error) {
      if (out.result) read(*out.result, sent);
    } else if (!retry(lane, sent, out.error, reused)) {
      for (auto& j : sent) j->error = out.error;
    } else {
      // Sent again (whole or in halves): only the jobs the statement left out answer now.
      std::erase_if(batch, [&](const std::shared_ptr<Job>& j) {
        return std::find(sent.begin(), sent.end(), j) != sent.end();
      });
    }
    ++answering;
    for (auto& j : batch) j->answer();
    --answering;
    pump();
  }

  /// Whether a failed statement's jobs go again: split in halves when the error may be one key's
  /// (keybatches.h, worthSplitting); resent once, whole, when a reused connection turned out
  /// dead and the statement is safe to send twice (claims: as Pool::withRetry).
  template <typename Job>
  bool retry(Lane<Job>& lane, Batch<Job>& sent, const std::exception_ptr& error, bool reused) {
    try {
      std::rethrow_exception(error);
    } catch (const pg::QueryError& e) {
      if (sent.size() < 2 || !worthSplitting(e)) return false;
      const auto half = static_cast<std::ptrdiff_t>(sent.size() / 2);
      lane.again.emplace_front(sent.begin() + half, sent.end());
      lane.again.emplace_front(sent.begin(), sent.begin() + half);
      return true;
    } catch (const pg::Unavailable&) {
      if constexpr (std::is_same_v<Job, ClaimJob>) {
        if (!reused || stopped || std::any_of(sent.begin(), sent.end(), [](const auto& j) { return j->resent; }))
          return false;
        for (auto& j : sent) j->resent = true;
        lane.again.push_front(sent);
        return true;
      }
      return false;
    } catch (...) {
      return false;
    }
  }

  void stopNow() {
    if (stopped) return;
    stopped = true;
    for (auto& l : idle) l.conn->close();
    idle.clear();
    for (auto& w : all)
      if (auto c = w.lock()) c->close();  // a statement in flight ends with Unavailable
    all.clear();
    failQueued(std::make_exception_ptr(pg::Unavailable("the store's write path is stopping")));
  }
};

void AsyncKeyBatches::State::send(Link link, Batch<ClaimJob> batch) {
  claims.keysInFlight += batch.size();
  claims.batches += 1;
  claims.keys += static_cast<long long>(batch.size());
  // Keys of tiers with cross_key ride the same statement (as KeyBatches::runClaims).
  Batch<ClaimJob> sent =
      inLockOrder(batch, [](const ClaimJob& j) -> const Scope& { return j.scope(); }, /*eachKeyOnce=*/true);
  auto conn = link.conn;
  auto done = [self = shared_from_this(), link = std::move(link), batch = std::move(batch),
               sent](pg::AsyncConnection::Outcome out) mutable {
    // A sweeper archived the single key while it was inserted (0014's trigger): it has history.
    if (out.error && sent.size() == 1) try {
        std::rethrow_exception(out.error);
      } catch (const pg::QueryError& e) {
        if (e.sqlstate() == kArchivedMeanwhile) out.error = nullptr;  // no result: not claimed
      } catch (...) {
      }
    self->ended(self->claims, std::move(link), std::move(batch), std::move(sent), std::move(out),
                [](const pg::Result& r, Batch<ClaimJob>& jobs) {
                  if (jobs.size() == 1) {
                    const FreshClaimColumns col(r);
                    if (r.rows() == 1) jobs[0]->claimed = freshClaim(r, col, 0);
                    return;
                  }
                  std::vector<const ClaimRequest*> requests;
                  for (auto& j : jobs) requests.push_back(&j->request);
                  auto rows = claimedRows(r, requests);
                  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i]->claimed = std::move(rows[i]);
                });
  };
  if (sent.size() == 1) {
    conn->execPrepared("idem_claim_fresh", kFreshClaimSql, freshClaimParams(sent[0]->request), true, std::move(done));
    return;
  }
  ClaimArrays arrays;
  for (auto& j : sent) arrays.add(j->request);
  conn->execPrepared("idem_claim_fresh_batch", kFreshClaimBatchSql, arrays.take(), true, std::move(done));
}

void AsyncKeyBatches::State::send(Link link, Batch<CompletionJob> batch) {
  completions.keysInFlight += batch.size();
  completions.batches += 1;
  completions.keys += static_cast<long long>(batch.size());
  Batch<CompletionJob> sent =
      inLockOrder(batch, [](const CompletionJob& j) -> const Scope& { return j.scope(); }, /*eachKeyOnce=*/false);
  std::vector<const CompleteRequest*> requests;
  for (const auto& j : sent) requests.push_back(&j->request);
  auto conn = link.conn;
  auto done = [self = shared_from_this(), link = std::move(link), batch = std::move(batch),
               sent](pg::AsyncConnection::Outcome out) mutable {
    self->ended(self->completions, std::move(link), std::move(batch), std::move(sent), std::move(out),
                [](const pg::Result& r, Batch<CompletionJob>& jobs) {
                  if (jobs.size() == 1) {
                    if (r.rows() == 1) jobs[0]->stored = completedRow(r, 0);
                    return;
                  }
                  std::vector<const CompleteRequest*> sentRequests;
                  for (auto& j : jobs) sentRequests.push_back(&j->request);
                  auto rows = completedRows(r, sentRequests);
                  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i]->stored = rows[i];
                });
  };
  if (requests.size() == 1) {
    conn->execPrepared("idem_complete", kCompleteSql, completeParams(*requests[0]), false, std::move(done));
    return;
  }
  conn->execPrepared("idem_complete_batch", kCompleteBatchSql, completionBatchParams(requests), false,
                     std::move(done));
}

AsyncKeyBatches::AsyncKeyBatches(const asio::any_io_executor& executor, std::string conninfo, WriteBatching batching)
    : m_state(std::make_shared<State>(executor, std::move(conninfo), batching)) {}

AsyncKeyBatches::~AsyncKeyBatches() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; the statements end with their connections anyway
  }
}

void AsyncKeyBatches::claimFresh(ClaimRequest request, Claimed done) {
  auto job = std::make_shared<ClaimJob>();
  job->request = std::move(request);
  job->done = std::move(done);
  asio::dispatch(m_state->strand, [state = m_state, job = std::move(job)]() mutable {
    state->submit(std::move(job), state->claims);
  });
}

void AsyncKeyBatches::complete(CompleteRequest request, Completed done) {
  auto job = std::make_shared<CompletionJob>();
  job->request = std::move(request);
  job->done = std::move(done);
  asio::dispatch(m_state->strand, [state = m_state, job = std::move(job)]() mutable {
    state->submit(std::move(job), state->completions);
  });
}

void AsyncKeyBatches::stop() {
  asio::dispatch(m_state->strand, [state = m_state] { state->stopNow(); });
}

WriteBatchStats AsyncKeyBatches::stats() const {
  const State& s = *m_state;
  const auto limit = static_cast<long long>(s.limit.limit());
  return {s.claims.batches.load(), s.claims.keys.load(), s.completions.batches.load(), s.completions.keys.load(),
          s.claims.waiting.load(), s.completions.waiting.load(), limit, limit};
}

}  // namespace idem::store
