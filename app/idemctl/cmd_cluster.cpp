// idemctl cluster: a private PostgreSQL cluster for tests and the demo (not for production).
#include <iostream>

#include "app/idemctl/command.h"
#include "core/cluster/localcluster.h"

namespace {
int runCluster(const idemctl::Args& args) {
  if (args.positional().size() != 1 || !args.has("dir")) {
    std::cerr << "usage: idemctl cluster start|stop|status|conninfo --dir DIR [--port N]\n";
    return idemctl::kUsage;
  }
  idem::cluster::LocalCluster cluster(args.get("dir"), std::stoi(args.get("port", "5432")));
  const std::string& action = args.positional().front();
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
                "start|stop|status|conninfo --dir DIR [--port N]",
                {idemctl::Flag::option("dir", "DIR", "The cluster's folder (data, socket and log).", "required"),
                 idemctl::Flag::option("port", "N", "The port in the socket's name.", "5432")},
                runCluster);
