#pragma once
// A JSON answer (application/json), as the host's pages and the demo API's routes give them.
#include <nlohmann/json.hpp>

#include "core/enforce/problem.h"

namespace idem::gate {

[[nodiscard]] enforce::Response jsonResponse(int status, const nlohmann::json& body);

}  // namespace idem::gate
