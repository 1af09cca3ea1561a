#include "app/idemctl/server_flags.h"

#include <malloc.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "core/client/client.h"
#include "core/policy/duration.h"

namespace idemctl {

const char* const kServerFlagsUsage =
    "[--service NAME] [--listen HOST:PORT] [--threads N] [--pool N] [--access-log -|FILE|off] [--max-body BYTES] [--trace-fold N] "
    "[--replay-cache DURATION|off] "
    "[--prepared-statements on|off] [--max-header-bytes BYTES] [--max-headers N] [--max-connections N] "
    "[--max-connections-per-client N] [--max-buffered-body BYTES] [--max-replay-bytes BYTES] [--replay-large-reads N] "
    "[--max-conflict-waiters N] [--max-conflict-waiters-per-key N] [--write-batches-in-flight auto|N] "
    "[--header-timeout SECONDS] [--body-timeout SECONDS] [--idle-timeout SECONDS]";

namespace {
std::string seconds(std::chrono::milliseconds d) { return std::to_string(d.count() / 1000); }
}  // namespace

Flags withServerFlags(Flags own) {
  // The defaults shown are the options' own, so the help cannot drift from what runs.
  const idem::endpoint::ServerOptions d;
  using F = Flag;
  return std::move(own) +
         Flags{
             F::option("service", "NAME",
                       "Which service this is (a-z 0-9 . _ -, up to 63): its keys, trace and chosen policy are its "
                       "own when several services share one store.",
                       d.service),
             F::option("listen", "HOST:PORT", "Where clients connect; port 0 picks a free port (printed at start).",
                       "127.0.0.1:0"),
             F::option("threads", "N", "Threads that run handlers (2 to 4096); a slow or idle client holds none.",
                       std::to_string(d.threads)),
             F::option("pool", "N", "Connections to the store (1 to 1000).", std::to_string(d.poolSize)),
             F::option("access-log", "-|FILE|off", "One JSON line per request: - is standard output.", "-"),
             F::option("max-body", "BYTES", "Largest request body; larger is 413.", std::to_string(d.maxBodyBytes)),
             F::option("trace-fold", "N",
                       "Identical decisions on one key kept as trace rows per batch before the rest fold into one "
                       "counted row; 0 keeps every one.",
                       std::to_string(d.traceFoldAfter)),
             F::option("prepared-statements", "on|off",
                       "off: unnamed statements only, for a pooler in transaction mode that does not keep them.", "on"),
             F::option("max-header-bytes", "BYTES",
                       "Largest request line and header block, 1024 to " +
                           std::to_string(idem::server::kMaxHeaderBytes) + "; larger is 431.",
                       std::to_string(d.maxHeaderBytes)),
             F::option("replay-cache", "DURATION|off",
                       "How long a done key's answer may be replayed from memory (up to 10m): the bound on an "
                       "operator's purge.",
                       idem::policy::formatDuration(d.replayCache.maxAge)),
             F::option("max-headers", "N", "Most header fields in a request (8 to 10000); more is 431.",
                       std::to_string(d.maxHeaderCount)),
             F::option("max-connections", "N",
                       "Client connections open at once (16 to 1000000); more get 503. The proxy lowers it to fit "
                       "the descriptor limit.",
                       std::to_string(d.maxConnections)),
             F::option("max-connections-per-client", "N", "Connections open at once from one address; more get 429.",
                       "half of --max-connections"),
             F::option("max-buffered-body", "BYTES",
                       "Request-body bytes buffered by all connections together; a body that does not fit gets 503 "
                       "and Retry-After.",
                       "64 MiB, or 8 x --max-body when that is more"),
             F::option("max-replay-bytes", "BYTES",
                       "Bytes of stored answers being replayed at once, from the store's read until written (1 MiB "
                       "to 1 GiB); a replay that does not fit gets 503 and Retry-After.",
                       std::to_string(d.replayBodies.maxBytes)),
             F::option("replay-large-reads", "N",
                       "Store connections that may read a stored answer over 256 KiB at once (1 to --pool); the "
                       "rest stay free for other requests.",
                       "a quarter of --pool, at least 1"),
             F::option("max-conflict-waiters", "N",
                       "Retries that may wait at once for their key's original on tiers with on_conflict \"wait:…\" "
                       "(1 to 100000; each reads the store up to 4 times a second); beyond, the 409 at once.",
                       std::to_string(d.conflictWaits.total)),
             F::option("max-conflict-waiters-per-key", "N",
                       "Of those, retries of one key (1 to --max-conflict-waiters): more learn nothing more, they "
                       "all get the same answer.",
                       std::to_string(d.conflictWaits.perKey)),
             F::option("write-batches-in-flight", "auto|N",
                       "Statements writing new keys' claims (and as many writing completions) in flight at once; "
                       "requests that arrive meanwhile go together in the next. auto follows the keys/s it makes "
                       "between 1 and 8 (more on a slow disk, fewer when the CPU is the limit); N (1 to 64) fixes it. "
                       "The proxy, which waits on no statement, counts both kinds together: 2 to 16 auto, 2N (at most "
                       "16) fixed.",
                       "auto"),
             F::option("header-timeout", "SECONDS", "For the whole header block, 1 to 3600.", seconds(d.headerTimeout)),
             F::option("body-timeout", "SECONDS", "For the whole body after the headers, 1 to 3600.",
                       seconds(d.bodyTimeout)),
             F::option("idle-timeout", "SECONDS", "A kept-alive connection waits this long for its next request.",
                       seconds(d.idleTimeout)),
         };
}

std::string readServerFlags(const Args& args, idem::endpoint::ServerOptions& options) {
  options.service = args.get("service", idem::store::kDefaultService);
  if (auto bad = idem::store::serviceNameProblem(options.service); !bad.empty()) return "--service: " + bad;
  const std::string listen = args.get("listen", "127.0.0.1:0");
  if (!idem::client::splitHostPort(listen, options.host, options.port))
    return "--listen: \"" + listen + "\" is not HOST:PORT (e.g. 127.0.0.1:8080, or port 0 for any free port)";
  if (args.has("threads") && !parseInt(args.get("threads"), 2, 4096, options.threads))
    return "--threads must be an integer from 2 to 4096";
  if (args.has("pool") && !parseInt(args.get("pool"), 1, 1000, options.poolSize))
    return "--pool must be an integer from 1 to 1000";
  const std::string prepared = args.get("prepared-statements", "on");
  if (prepared != "on" && prepared != "off") return "--prepared-statements must be on or off";
  options.preparedStatements = prepared == "on";
  if (args.has("trace-fold")) {
    int keep = 0;
    if (!parseInt(args.get("trace-fold"), 0, 1000000, keep))
      return "--trace-fold must be a whole number from 0 (a trace row per decision) to 1000000";
    options.traceFoldAfter = static_cast<std::size_t>(keep);
  }
  if (args.has("replay-cache")) {
    // How long a done key's answer may be replayed from memory (the bound on an operator's purge).
    const std::string text = args.get("replay-cache");
    const auto d = text == "off" ? std::optional<std::chrono::milliseconds>(0) : idem::policy::parseDuration(text);
    if (!d || *d > std::chrono::minutes(10))
      return "--replay-cache must be off or a duration up to 10m such as 500ms or 1s (how long a replay may be "
             "answered from memory)";
    options.replayCache.maxAge = *d;
  }
  if (args.has("max-body")) {
    int bytes = 0;
    if (!parseInt(args.get("max-body"), 1, 1 << 30, bytes)) return "--max-body must be a positive byte count";
    options.maxBodyBytes = static_cast<std::size_t>(bytes);
  }

  // Limits and deadlines for slow or oversized requests (core/server/README.md, "Limits and slow clients").
  struct SizeFlag {
    const char* name;
    int min, max;
    std::size_t& target;
  };
  // The header block's cap is what the parser can store: Beast keeps each field under 64 KiB.
  for (const SizeFlag& f : {SizeFlag{"max-header-bytes", 1024, static_cast<int>(idem::server::kMaxHeaderBytes),
                                     options.maxHeaderBytes},
                            SizeFlag{"max-headers", 8, 10000, options.maxHeaderCount}}) {
    int value = 0;
    if (!args.has(f.name)) continue;
    if (!parseInt(args.get(f.name), f.min, f.max, value))
      return std::string("--") + f.name + " must be an integer from " + std::to_string(f.min) + " to " +
             std::to_string(f.max);
    f.target = static_cast<std::size_t>(value);
  }
  if (args.has("max-connections") && !parseInt(args.get("max-connections"), 16, 1000000, options.maxConnections))
    return "--max-connections must be an integer from 16 to 1000000";
  if (args.has("max-connections-per-client") &&
      !parseInt(args.get("max-connections-per-client"), 1, 1000000, options.maxConnectionsPerClient))
    return "--max-connections-per-client must be an integer from 1 to 1000000";
  if (args.has("max-buffered-body")) {
    int bytes = 0;
    if (!parseInt(args.get("max-buffered-body"), 1024, 1 << 30, bytes) ||
        static_cast<std::size_t>(bytes) < options.maxBodyBytes)
      return "--max-buffered-body must be a byte count from --max-body (" + std::to_string(options.maxBodyBytes) +
             ") to 1073741824";
    options.maxBufferedBodyBytes = static_cast<std::size_t>(bytes);
  }
  if (args.has("max-replay-bytes")) {
    int bytes = 0;
    if (!parseInt(args.get("max-replay-bytes"), 1 << 20, 1 << 30, bytes))
      return "--max-replay-bytes must be a byte count from 1048576 (1 MiB) to 1073741824 (1 GiB)";
    options.replayBodies.maxBytes = static_cast<std::size_t>(bytes);
  }
  if (args.has("replay-large-reads") &&
      !parseInt(args.get("replay-large-reads"), 1, options.poolSize, options.replayBodies.maxLargeReads))
    return "--replay-large-reads must be an integer from 1 to --pool (" + std::to_string(options.poolSize) + ")";
  if (args.has("max-conflict-waiters") &&
      !parseInt(args.get("max-conflict-waiters"), 1, 100000, options.conflictWaits.total))
    return "--max-conflict-waiters must be an integer from 1 to 100000";
  if (args.has("max-conflict-waiters-per-key") &&
      !parseInt(args.get("max-conflict-waiters-per-key"), 1, options.conflictWaits.total, options.conflictWaits.perKey))
    return "--max-conflict-waiters-per-key must be an integer from 1 to --max-conflict-waiters (" +
           std::to_string(options.conflictWaits.total) + ")";
  if (!args.has("max-conflict-waiters-per-key"))
    options.conflictWaits.perKey = std::min(options.conflictWaits.perKey, options.conflictWaits.total);
  if (const std::string inFlight = args.get("write-batches-in-flight", "auto"); inFlight != "auto") {
    int n = 0;
    if (!parseInt(inFlight, 1, 64, n)) return "--write-batches-in-flight must be auto or a whole number from 1 to 64";
    options.writeBatching.inFlight = static_cast<std::size_t>(n);
  }
  struct SecondsFlag {
    const char* name;
    std::chrono::milliseconds& target;
  };
  for (const SecondsFlag& f :
       {SecondsFlag{"header-timeout", options.headerTimeout}, SecondsFlag{"body-timeout", options.bodyTimeout},
        SecondsFlag{"idle-timeout", options.idleTimeout}}) {
    int seconds = 0;
    if (!args.has(f.name)) continue;
    if (!parseInt(args.get(f.name), 1, 3600, seconds))
      return std::string("--") + f.name + " must be a whole number of seconds from 1 to 3600";
    f.target = std::chrono::seconds(seconds);
  }
  return {};
}

AccessLog::~AccessLog() {
  if (m_owned) std::fclose(m_file);
}

std::string AccessLog::switchTo(const std::string& target) {
  std::FILE* file = nullptr;
  bool owned = false;
  if (target == "-") {
    file = stdout;
  } else if (target != "off") {
    file = std::fopen(target.c_str(), "a");
    if (!file) return "--access-log: cannot open " + target + " for appending";
    owned = true;
  }
  std::lock_guard lock(m_mutex);
  if (m_owned) std::fclose(m_file);
  m_file = file;
  m_owned = owned;
  return {};
}

std::string AccessLog::open(const std::string& target, idem::endpoint::ServerOptions& options) {
  if (target == "off") return {};
  if (auto bad = switchTo(target); !bad.empty()) return bad;
  m_started = true;
  options.accessLog = [this](const std::string& line) {
    std::lock_guard lock(m_mutex);
    if (!m_file) return;  // turned off by a reload
    std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
  };
  return {};
}

std::string AccessLog::reopen(const std::string& target) {
  if (!m_started) return target == "off" ? std::string() : "--access-log needs a restart: it was off at start";
  return switchTo(target);
}

StopSignals::StopSignals() {
  sigemptyset(&m_set);
  sigaddset(&m_set, SIGINT);
  sigaddset(&m_set, SIGTERM);
  sigaddset(&m_set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &m_set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void StopSignals::serveUntilStopped(idem::endpoint::Server& server, std::string_view command,
                                    const std::function<void()>& reload) {
  // Signals are taken by one thread (sigtimedwait), so the server's threads never run a
  // handler; it asks the server to stop, which finishes in-flight requests first.
  std::atomic<bool> finished{false};
  std::thread waiter([&] {
    const timespec tick{0, 200'000'000};
    while (!finished.load()) {
      siginfo_t info;
      const int sig = sigtimedwait(&m_set, &info, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        std::cerr << "idemctl " << command << ": " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
                  << ": finishing in-flight requests, then exiting\n";
        server.stop();
      } else if (sig == SIGHUP && reload) {
        reload();  // here, off the server's threads: it reads files and writes to the store
      }
    }
  });
  server.run();
  finished = true;
  waiter.join();
}

int runServer(const Args& args, idem::endpoint::ServerOptions options, std::string_view command, std::string_view usage,
              const ReadOptions& read, const std::function<void(idem::endpoint::Server&)>& announce) {
  namespace ep = idem::endpoint;
  AccessLog log;
  if (auto bad = log.open(args.get("access-log", "-"), options); !bad.empty()) return usageError(command, usage, bad);
  // Request bodies and answers of 256 KiB and more get pages of their own, unmapped when freed.
  // glibc's default raises this threshold after the first such free, and then stalled 1 MiB
  // bodies land on heaps it rarely gives back: the process stays grown after the load left.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  StopSignals signals;
  std::unique_ptr<ep::Server> server;
  try {
    server = std::make_unique<ep::Server>(std::move(options));
  } catch (const idem::server::StartError& e) {
    std::cerr << "idemctl " << command << ": " << e.what() << '\n';
    return e.exitCode();
  } catch (const std::runtime_error& e) {  // a handler that could not start (an unresolvable upstream)
    std::cerr << "idemctl " << command << ": " << e.what() << '\n';
    return kUsage;
  }
  announce(*server);
  Reloader reloader(args, command, read, log);
  signals.serveUntilStopped(*server, command, [&] { reloader.reload(*server); });
  server.reset();
  std::cerr << "idemctl " << command << ": stopped\n";
  return kOk;
}

}  // namespace idemctl
