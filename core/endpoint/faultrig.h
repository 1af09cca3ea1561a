#pragma once
// The fault rig's raw route (server/rawroute.h): /faults/<profile>[/op-<id>]/<route> is answered
// by its profile (faultprofile.h), never executed or enforced, and every attempt is written to
// idem_demo.fault_attempts through the store pool on a handler thread (faultlog.h).
#include "core/server/rawroute.h"
#include "core/store/pool.h"

namespace idem::endpoint {

class FaultRig : public server::RawRoute {
 public:
  /// `docsUrl`: the page the problem answers link.
  FaultRig(store::Pool& pool, std::string docsUrl) : m_pool(pool), m_docs(std::move(docsUrl)) {}
  bool serve(const server::Request& request, server::RawExchange& exchange, const server::Dispatch& where) override;

 private:
  store::Pool& m_pool;
  const std::string m_docs;
};

}  // namespace idem::endpoint
