#include "core/store/servicename.h"

namespace idem::store {

std::string serviceNameProblem(std::string_view name) {
  if (name.empty()) return "a service name cannot be empty";
  if (name.size() > kServiceNameMax)
    return "\"" + std::string(name.substr(0, 20)) + "…\" is " + std::to_string(name.size()) +
           " characters long; a service name has at most " + std::to_string(kServiceNameMax);
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      return "\"" + std::string(name) + "\" has '" + std::string(1, c) + "' at position " + std::to_string(i + 1) +
             "; a service name uses only a-z, 0-9, '.', '_' and '-'";
  }
  return {};
}

}  // namespace idem::store
