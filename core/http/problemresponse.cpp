#include "core/http/problemresponse.h"

#include <nlohmann/json.hpp>

#include "core/text/json_text.h"

namespace idem::http {

Response problemResponse(Problem p, std::string_view docsUrl, std::string_view detail, int status,
                         const std::vector<std::pair<std::string_view, std::string_view>>& extra) {
  const ProblemInfo& info = problemInfo(p);
  if (status == 0) status = info.status;
  nlohmann::json body{{"type", std::string(docsUrl) + "#" + std::string(info.slug)},
                      {"title", info.title},
                      {"status", status},
                      {"detail", detail}};
  for (const auto& [name, value] : extra)
    if (!value.empty()) body[std::string(name)] = value;
  Response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/problem+json");
  r.body = text::dumpJson(body);  // the detail may quote a path, key or id the client sent
  return r;
}

}  // namespace idem::http
