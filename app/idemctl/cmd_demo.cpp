// idemctl demo: a private PostgreSQL cluster, the endpoint on a free loopback port with the
// demo policy, seeded history (including the seed's incident), light live traffic, and the
// console when it is built. Everything stops on Ctrl-C / SIGTERM or when the console closes.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "app/idemctl/command.h"
#include "app/idemctl/demo_proxy.h"
#include "core/cluster/localcluster.h"
#include "core/demo/seed.h"
#include "core/demo/traffic.h"
#include "core/endpoint/server.h"
#include "core/faultrig/faultrig.h"
#include "core/store/migrations.h"
#include "resources/embedded_resources.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kUsageText = "[--headless] [--data DIR] [--keep] [--port N] [--through-proxy]";
constexpr const char* kDatabase = "idem_demo";

std::string defaultDataDir() {
  // As root the server runs as postgres, which cannot enter root's home (and Idem opens no
  // folder up for it): a root-owned folder it can reach.
  if (geteuid() == 0) return "/var/lib/idem/demo";
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/idem/demo";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/share/idem/demo";
}

/// The console next to this idemctl's build (build/app/idemctl/idemctl → build/app/console/idem-console).
std::string consolePath() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path candidate = self.parent_path().parent_path() / "console" / "idem-console";
  return access(candidate.c_str(), X_OK) == 0 ? candidate.string() : std::string();
}

pid_t launchConsole(const std::string& exe, const std::string& conninfo, const std::string& url) {
  // The console's live simulation finds the endpoint here.
  setenv("IDEM_DEMO_ENDPOINT", url.c_str(), 1);
  return idemctl::spawnProcess({exe, "--db", conninfo});
}

void recreateDatabase(const idem::cluster::LocalCluster& cluster, bool keep) {
  idem::pg::Connection admin(cluster.conninfo());
  const bool exists =
      admin.exec("SELECT count(*) AS n FROM pg_database WHERE datname = $1", {kDatabase}).integer(0, "n") > 0;
  if (exists && keep) return;
  if (exists) admin.exec(std::string("DROP DATABASE ") + idem::pg::quoteIdentifier(kDatabase) + " WITH (FORCE)");
  admin.exec(std::string("CREATE DATABASE ") + idem::pg::quoteIdentifier(kDatabase));
}

int runDemo(const idemctl::Args& args) {
  namespace ep = idem::endpoint;
  const std::string dataDir = fs::absolute(args.get("data", defaultDataDir())).lexically_normal().string();
  const bool headless = args.has("headless");
  const bool keep = args.has("keep");
  int port = 0;
  if (args.has("port")) {
    try {
      port = std::stoi(args.get("port"));
    } catch (...) {
      port = -1;
    }
    if (port < 0 || port > 65535) {
      std::cerr << "idemctl demo: --port must be 0..65535\nusage: idemctl demo " << kUsageText << '\n';
      return idemctl::kUsage;
    }
  }

  // Signals go to the loop below (sigtimedwait), never to the worker threads started later.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::cout << "idem demo: data in " << dataDir << "\n" << std::flush;
  fs::create_directories(dataDir);
  idem::cluster::LocalCluster cluster(dataDir + "/cluster");
  std::cout << "starting a private PostgreSQL cluster (Unix socket only)…\n" << std::flush;
  cluster.start();
  struct StopCluster {
    idem::cluster::LocalCluster& c;
    ~StopCluster() {
      std::cout << "stopping the PostgreSQL cluster…\n" << std::flush;
      c.stop();
    }
  } stopCluster{cluster};

  recreateDatabase(cluster, keep);
  const std::string conninfo = cluster.conninfo(kDatabase);
  {
    idem::pg::Connection conn(conninfo);
    idem::store::migrate(conn, idem::store::kDefaultLockTimeout, /*withDemo=*/true);
  }

  const std::string logPath = dataDir + "/endpoint.log";
  std::FILE* log = std::fopen(logPath.c_str(), "a");
  std::mutex logMutex;
  ep::ServerOptions options;
  options.conninfo = conninfo;
  options.policy = idem::policy::parsePolicy(*idem::resources::find("policy/demo-policy.json"), "demo-policy.json");
  options.port = port;
  options.threads = 32;
  options.allowFaultInjection = true;
  options.rawRoute = idem::faultrig::makeFaultRig;  // the /faults/... routes, as serve has them
  // The seed moves keys back in time by SQL behind the endpoint's back (an operator's edit):
  // replays from memory would honour that only after --replay-cache's max age.
  options.replayCache.maxAge = std::chrono::milliseconds(0);
  if (log)
    options.accessLog = [log, &logMutex](const std::string& line) {
      std::lock_guard lock(logMutex);
      std::fwrite(line.data(), 1, line.size(), log);
      std::fflush(log);
    };
  auto server = std::make_unique<ep::Server>(std::move(options));
  server->start();
  const std::string url = server->url();
  std::cout << "endpoint on " << url << " (access log: " << logPath << ")\n" << std::flush;

  bool seeded = false;
  if (keep) {
    idem::pg::Connection conn(conninfo);
    seeded = conn.exec("SELECT count(*) AS n FROM idem_demo.ledger").integer(0, "n") > 0;
  }
  idem::demo::SeedReport report;
  if (!seeded) {
    std::cout << "seeding history through " << url << "…\n" << std::flush;
    report = idem::demo::seedHistory(*server, conninfo);
    for (const auto& line : report.lines) std::cout << "  - " << line << '\n';
  } else {
    std::cout << "kept the existing demo data (--keep)\n";
  }
  idem::demo::LiveTraffic traffic("127.0.0.1", server->port());

  // The sample service behind `idemctl proxy`, on the same store: its traffic shows in the console.
  std::unique_ptr<idemctl::DemoProxy> proxy;
  if (args.has("through-proxy")) {
    try {
      proxy = std::make_unique<idemctl::DemoProxy>(
          conninfo, dataDir,
          idem::policy::parsePolicy(*idem::resources::find("policy/demo-policy.json"), "demo-policy.json"));
    } catch (const std::exception& e) {
      std::cerr << "idemctl demo: --through-proxy: " << e.what() << '\n';
      return idemctl::kUnavailable;
    }
    std::cout << "sample service (Flask) on " << proxy->serviceUrl() << ", idemctl proxy in front of it on "
              << proxy->url() << " (admin " << proxy->adminUrl() << ")\n"
              << std::flush;
  }
  {
    std::ofstream info(dataDir + "/demo.json");
    nlohmann::json j{{"conninfo", conninfo}, {"endpoint", url}, {"pid", getpid()}};
    if (proxy) j["proxy"] = proxy->url(), j["sample_service"] = proxy->serviceUrl();
    info << j.dump(2) << '\n';
  }
  const std::string key = report.incidentKey.empty() ? "checkout-8812-pay" : report.incidentKey;
  // The charge ids a customer would quote (read back, so --keep shows them too): the first is
  // the one meant, the second the duplicate to refund.
  std::vector<std::string> charges;
  {
    idem::pg::Connection conn(conninfo);
    auto rows = conn.exec("SELECT id FROM idem_demo.ledger WHERE tenant = $1 AND idem_key = $2 ORDER BY generation",
                          {std::string("acct_acme"), key});
    for (int i = 0; i < rows.rows(); ++i) charges.push_back(rows.str(i, "id"));
  }
  std::cout << "\nThe demo is running.\n"
            << "  store (libpq):  " << conninfo << "\n"
            << "  endpoint:       " << url << "   (policy: " << url << "/idempotency)\n\n"
            << "Try:\n"
            << "  curl -s -X POST " << url
            << "/v1/payments -H 'Content-Type: application/json' -H 'Account-Id: acct_me' \\\n"
               "       -H 'Idempotency-Key: my-first-key' -d "
               "'{\"amount\":1000,\"currency\":\"usd\",\"customer\":\"cus_1\"}'\n"
            << "  curl -s '" << url << "/v1/payments?idempotency_key=" << key << "' -H 'Account-Id: acct_acme'\n"
            << "  idemctl explain --db \"" << conninfo << "\" --key " << key
            << " --scope \"acct_acme POST /v1/payments\"\n"
            << "  psql \"" << conninfo << "\"\n";
  if (charges.size() >= 2)
    std::cout << "In the console: Ctrl+K, paste " << charges[1] << " (the charge the customer disputes; "
              << charges[0] << " is the one they meant) and press Enter.\n";
  if (proxy)
    std::cout << "Through the proxy (the sample service runs each charge; retries replay):\n"
              << "  curl -s -X POST " << proxy->url()
              << "/v1/payments -H 'Content-Type: application/json' -H 'Account-Id: acct_me' \\\n"
                 "       -H 'Idempotency-Key: proxy-first-key' -d '{\"amount\":1000,\"currency\":\"usd\"}'\n"
              << "  curl -s " << proxy->serviceUrl() << "/executions    # the service's own count\n"
              << "  In the console, keys named proxy-… came through the proxy.\n";
  std::cout << "\n";

  pid_t console = -1;
  if (headless) {
    std::cout << "headless: not opening the console.\n";
  } else if (const std::string exe = consolePath(); exe.empty()) {
    std::cout << "The console (idem-console) is not built next to this idemctl; running headless. "
                 "Build it with `./run build`, or open the store above with it later.\n";
  } else if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) {
    std::cout << "No display (DISPLAY/WAYLAND_DISPLAY unset); running headless. Open the store above with "
                 "`idem-console --db \"…\"` from a desktop session.\n";
  } else {
    console = launchConsole(exe, conninfo, url);
    std::cout << (console > 0 ? "opened the console (" + exe + ")\n"
                              : "could not start " + exe + "; running headless\n");
  }
  std::cout << "Stop with Ctrl-C.\n" << std::flush;

  for (;;) {
    const timespec tick{0, 500'000'000};
    siginfo_t info;
    const int sig = sigtimedwait(&stopSignals, &info, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      std::cout << "\nstopping the demo…\n" << std::flush;
      break;
    }
    if (console > 0) {
      int status = 0;
      if (waitpid(console, &status, WNOHANG) == console) {
        console = -1;
        std::cout << "the console closed; stopping the demo…\n" << std::flush;
        break;
      }
    }
  }
  traffic.stop();
  proxy.reset();
  if (console > 0) {
    kill(console, SIGTERM);
    waitpid(console, nullptr, 0);
  }
  server->stop();
  server->wait();
  server.reset();
  if (log) std::fclose(log);
  std::error_code ec;
  fs::remove(dataDir + "/demo.json", ec);
  return idemctl::kOk;  // StopCluster stops PostgreSQL on the way out
}

int demoMain(const idemctl::Args& args) {
  try {
    return runDemo(args);
  } catch (const idem::server::StartError& e) {
    std::cerr << "idemctl demo: the endpoint did not start: " << e.what() << '\n';
    return e.exitCode();
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl demo: the demo's PostgreSQL cannot be reached: " << e.what() << '\n';
    return idemctl::kUnavailable;
  }
}

}  // namespace

IDEMCTL_COMMAND("demo", "run the demo: private PostgreSQL, seeded endpoint, live traffic, the console", kUsageText,
                {idemctl::Flag::toggle("headless", "Do not open the console; run until Ctrl-C."),
                 idemctl::Flag::option("data", "DIR", "The private PostgreSQL cluster's folder.",
                                       "/var/lib/idem/demo as root, else a folder in the user's home"),
                 idemctl::Flag::toggle("keep", "Keep the demo database from the last run instead of recreating it."),
                 idemctl::Flag::option("port", "N", "The endpoint's loopback port (0: any free port).", "0"),
                 idemctl::Flag::toggle("through-proxy",
                                       "Also run the sample service behind `idemctl proxy` on the same store.")},
                demoMain);
