#pragma once
// An HTTP answer as the layers above the wire build it: the enforcer's decisions, a handler's
// routes, the transport's own refusals.
#include <string>

#include "core/http/headers.h"

namespace idem::http {

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
};

}  // namespace idem::http
