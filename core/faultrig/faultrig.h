#pragma once
// The fault rig as a raw route of the transport (core/server/rawroute.h):
// /faults/<profile>[/op-<id>]/<route> is answered by its profile (faultprofile.h), never executed
// or enforced, and every attempt is written to idem_demo.fault_attempts through the store pool on
// a handler thread (faultlog.h).
#include <memory>
#include <string>

#include "core/server/rawroute.h"
#include "core/store/pool.h"

namespace idem::faultrig {

class FaultRig : public server::RawRoute {
 public:
  /// `docsUrl`: the page the problem answers link.
  FaultRig(store::Pool& pool, std::string docsUrl) : m_pool(pool), m_docs(std::move(docsUrl)) {}
  bool serve(const server::Request& request, server::RawExchange& exchange, const server::Dispatch& where) override;

 private:
  store::Pool& m_pool;
  const std::string m_docs;
};

/// The rig as a server's raw route (endpoint::ServerOptions::rawRoute takes this function).
[[nodiscard]] std::unique_ptr<server::RawRoute> makeFaultRig(store::Pool& pool, const std::string& docsUrl);

}  // namespace idem::faultrig
