#pragma once
// `idemctl demo --through-proxy`: the sample service (resources/sample/charge_app.py, a Flask app
// that knows nothing of Idem) on a free loopback port, `idemctl proxy`'s handler in front of it
// on the demo's store and policy, and live traffic through the proxy with keys named "proxy-…",
// so the console shows traffic that went through the proxy next to the endpoint's.
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/demo/traffic.h"
#include "core/endpoint/server.h"

namespace idemctl {

/// Starts `args` (args[0] the program) with SIGINT/SIGTERM unblocked, its output appended to
/// `logPath` when given. -1 when it could not start.
pid_t spawnProcess(std::vector<std::string> args, const std::string& logPath = {});

class DemoProxy {
 public:
  /// Throws std::runtime_error saying what is missing (python3-flask) or what failed.
  DemoProxy(const std::string& conninfo, const std::string& dataDir, idem::policy::Policy policy);
  DemoProxy(const DemoProxy&) = delete;
  DemoProxy& operator=(const DemoProxy&) = delete;
  /// Stops the traffic, the proxy and the sample service.
  ~DemoProxy();

  [[nodiscard]] std::string url() const { return m_proxy->url(); }
  [[nodiscard]] std::string adminUrl() const { return m_proxy->adminUrl(); }
  [[nodiscard]] const std::string& serviceUrl() const { return m_serviceUrl; }

 private:
  pid_t m_service = -1;
  std::string m_serviceUrl;
  std::unique_ptr<idem::endpoint::Server> m_proxy;
  std::unique_ptr<idem::demo::LiveTraffic> m_traffic;
};

}  // namespace idemctl
