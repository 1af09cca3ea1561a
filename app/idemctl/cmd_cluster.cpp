// idemctl cluster: a private PostgreSQL cluster for tests and the demo (not for production).
#include <iostream>
#include <optional>

#include "app/idemctl/command.h"
#include "core/cluster/localcluster.h"

namespace {
constexpr const char* kUsageText = "start|stop|status|conninfo --dir DIR [--port N]";

int runCluster(const idemctl::Args& args) {
  if (args.positional().size() != 1 || !args.has("dir"))
    return idemctl::usageError("cluster", kUsageText, "an action and --dir are required");
  const std::string& action = args.positional().front();
  int flagPort = 0;
  if (args.has("port") && !idemctl::parseInt(args.get("port"), 1, 65535, flagPort))
    return idemctl::usageError("cluster", kUsageText, "--port: a port number from 1 to 65535, not '" + args.get("port") + "'");
  // Without --port: the port the cluster runs on, or last started with (5432 for a new one).
  const std::optional<int> recorded = idem::cluster::LocalCluster(args.get("dir")).recordedPort();
  const int port = args.has("port") ? flagPort : recorded.value_or(5432);
  idem::cluster::LocalCluster cluster(args.get("dir"), port);
  if ((action == "start" || action == "conninfo") && recorded && *recorded != port && cluster.running()) {
    std::cerr << "idemctl cluster: the cluster in " << cluster.root() << " is running on port " << *recorded
              << ", not " << port << "; leave out --port, or stop it first\n";
    return idemctl::kFailure;
  }
  if (action == "start") {
    cluster.start();
    std::cout << cluster.conninfo() << '\n';
  } else if (action == "stop") {
    cluster.stop();
  } else if (action == "status") {
    std::cout << (cluster.running() ? "running" : "stopped") << '\n';
    return cluster.running() ? idemctl::kOk : idemctl::kFailure;
  } else if (action == "conninfo") {
    std::cout << cluster.conninfo() << '\n';
  } else {
    std::cerr << "idemctl cluster: unknown action '" << action << "'\n";
    return idemctl::kUsage;
  }
  return idemctl::kOk;
}
}  // namespace

IDEMCTL_COMMAND("cluster", "start/stop a private PostgreSQL cluster (tests, demo)",
                kUsageText,
                {idemctl::Flag::option("dir", "DIR", "The cluster's folder (data, socket and log).", "required"),
                 idemctl::Flag::option("port", "N", "The port: start runs on it; the other actions read it from the cluster's folder when left out.", "the folder's, else 5432")},
                runCluster);
