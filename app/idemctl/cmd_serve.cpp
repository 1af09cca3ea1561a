// idemctl serve: the embedded test endpoint (docs/design.md §5) over a migrated store.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/idemctl/command.h"
#include "core/endpoint/client.h"
#include "core/endpoint/server.h"
#include "resources/embedded_resources.h"

namespace {

constexpr const char* kUsageText =
    "[--db CONNINFO] [--policy FILE] [--listen HOST:PORT] [--allow-fault-injection] [--threads N] [--pool N] "
    "[--access-log -|FILE|off] [--max-body BYTES] [--trace-fold N] [--prepared-statements on|off] "
    "[--max-header-bytes BYTES] [--max-headers N] [--max-connections N] [--header-timeout SECONDS] "
    "[--body-timeout SECONDS] [--idle-timeout SECONDS]";

int usage(const std::string& message) { return idemctl::usageError("serve", kUsageText, message); }

/// One writer for the access log: lines from many worker threads, never interleaved.
class LineSink {
 public:
  explicit LineSink(std::FILE* f) : m_file(f) {}
  void write(const std::string& line) {
    std::lock_guard lock(m_mutex);
    std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
  }

 private:
  std::mutex m_mutex;
  std::FILE* m_file;
};

int runServe(const idemctl::Args& args) {
  namespace ep = idem::endpoint;
  ep::ServerOptions options;
  options.conninfo = idemctl::conninfo(args);
  options.allowFaultInjection = args.has("allow-fault-injection");

  try {
    if (args.has("policy")) {
      options.policy = idem::policy::loadPolicyFile(args.get("policy"));
    } else {
      options.policy = idem::policy::parsePolicy(*idem::resources::find("policy/demo-policy.json"), "demo-policy.json");
      std::cerr << "idemctl serve: no --policy given; using the built-in demo policy\n";
    }
  } catch (const idem::policy::PolicyError& e) {
    return usage(e.what());
  }

  const std::string listen = args.get("listen", "127.0.0.1:0");
  if (!ep::splitHostPort(listen, options.host, options.port))
    return usage("--listen: \"" + listen + "\" is not HOST:PORT (e.g. 127.0.0.1:8080, or port 0 for any free port)");
  if (args.has("threads") && !idemctl::parseInt(args.get("threads"), 2, 4096, options.threads))
    return usage("--threads must be an integer from 2 to 4096");
  if (args.has("pool") && !idemctl::parseInt(args.get("pool"), 1, 1000, options.poolSize))
    return usage("--pool must be an integer from 1 to 1000");
  const std::string prepared = args.get("prepared-statements", "on");
  if (prepared != "on" && prepared != "off") return usage("--prepared-statements must be on or off");
  options.preparedStatements = prepared == "on";
  if (args.has("trace-fold")) {
    int keep = 0;
    if (!idemctl::parseInt(args.get("trace-fold"), 0, 1000000, keep))
      return usage("--trace-fold must be a whole number from 0 (a trace row per decision) to 1000000");
    options.traceFoldAfter = static_cast<std::size_t>(keep);
  }
  if (args.has("max-body")) {
    int bytes = 0;
    if (!idemctl::parseInt(args.get("max-body"), 1, 1 << 30, bytes)) return usage("--max-body must be a positive byte count");
    options.maxBodyBytes = static_cast<std::size_t>(bytes);
  }

  // Limits and deadlines for slow or oversized requests (core/endpoint/README.md, "Limits and slow clients").
  struct SizeFlag {
    const char* name;
    int min, max;
    std::size_t& target;
  };
  for (const SizeFlag& f : {SizeFlag{"max-header-bytes", 1024, 1 << 20, options.maxHeaderBytes},
                            SizeFlag{"max-headers", 8, 10000, options.maxHeaderCount}}) {
    int value = 0;
    if (!args.has(f.name)) continue;
    if (!idemctl::parseInt(args.get(f.name), f.min, f.max, value))
      return usage(std::string("--") + f.name + " must be an integer from " + std::to_string(f.min) + " to " +
                   std::to_string(f.max));
    f.target = static_cast<std::size_t>(value);
  }
  if (args.has("max-connections") && !idemctl::parseInt(args.get("max-connections"), 16, 1000000, options.maxConnections))
    return usage("--max-connections must be an integer from 16 to 1000000");
  struct SecondsFlag {
    const char* name;
    std::chrono::milliseconds& target;
  };
  for (const SecondsFlag& f : {SecondsFlag{"header-timeout", options.headerTimeout},
                               SecondsFlag{"body-timeout", options.bodyTimeout},
                               SecondsFlag{"idle-timeout", options.idleTimeout}}) {
    int seconds = 0;
    if (!args.has(f.name)) continue;
    if (!idemctl::parseInt(args.get(f.name), 1, 3600, seconds))
      return usage(std::string("--") + f.name + " must be a whole number of seconds from 1 to 3600");
    f.target = std::chrono::seconds(seconds);
  }

  const std::string logTarget = args.get("access-log", "-");
  std::FILE* logFile = nullptr;
  if (logTarget == "-") {
    logFile = stdout;
  } else if (logTarget != "off") {
    logFile = std::fopen(logTarget.c_str(), "a");
    if (!logFile) return usage("--access-log: cannot open " + logTarget + " for appending");
  }
  LineSink sink(logFile ? logFile : stdout);
  if (logFile) options.accessLog = [&sink](const std::string& line) { sink.write(line); };

  // Signals are taken by one thread (sigwait), so the worker threads started below never run
  // a handler; it asks the server to stop, which finishes in-flight requests first.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<ep::Server> server;
  try {
    server = std::make_unique<ep::Server>(std::move(options));
  } catch (const ep::StartError& e) {
    std::cerr << "idemctl serve: " << e.what() << '\n';
    return e.exitCode();
  }
  std::cout << "idem endpoint listening on " << server->url() << " (policy version " << server->policyVersion()
            << (args.has("allow-fault-injection") ? ", fault injection on" : "") << ")" << std::endl;
  std::cerr << "published policy: " << server->url() << "/idempotency; stop with Ctrl-C (SIGINT) or SIGTERM\n";

  std::atomic<bool> finished{false};
  std::thread signalWaiter([&] {
    const timespec tick{0, 200'000'000};
    while (!finished.load()) {
      siginfo_t info;
      const int sig = sigtimedwait(&stopSignals, &info, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        std::cerr << "idemctl serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
                  << ": finishing in-flight requests, then exiting\n";
        server->stop();
      }
    }
  });
  server->run();
  finished = true;
  signalWaiter.join();
  server.reset();
  if (logFile && logFile != stdout) std::fclose(logFile);
  std::cerr << "idemctl serve: stopped\n";
  return idemctl::kOk;
}

}  // namespace

IDEMCTL_COMMAND("serve", "run the embedded test endpoint (payments, refunds, orders) over the store", kUsageText,
                {"db", "policy", "listen", "allow-fault-injection", "threads", "pool", "access-log", "max-body", "trace-fold",
                 "prepared-statements", "max-header-bytes", "max-headers", "max-connections", "header-timeout",
                 "body-timeout", "idle-timeout"},
                runServe);
