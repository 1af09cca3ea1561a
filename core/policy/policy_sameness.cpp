#include "core/policy/policy_sameness.h"

#include <algorithm>
#include <vector>

#include "core/policy/policy_json.h"

namespace idem::policy::internal {
namespace {

using nlohmann::json;

std::vector<std::string> pointers(const FieldReader& r, const json& v, const std::string& path) {
  r.expect(v, path, json::value_t::array, "an array of JSON pointers such as [\"/amount\"]");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = element(path, i);
    const std::string p = r.str(v[i], at);
    if (!p.starts_with('/')) r.fail(at, shown(v[i]) + " is not a JSON pointer (start it with '/', e.g. \"/amount\")");
    try {
      (void)json::json_pointer(p);
    } catch (const json::exception&) {
      r.fail(at, shown(v[i]) + " is not a JSON pointer (write '~' as ~0 and '/' inside a name as ~1)");
    }
    if (std::find(out.begin(), out.end(), p) != out.end()) r.fail(at, shown(v[i]) + " is listed twice");
    out.push_back(p);
  }
  return out;
}

}  // namespace

fp::Spec readFingerprint(const FieldReader& r, const json& v, const std::string& path) {
  r.expect(v, path, json::value_t::object, "an object such as {\"mode\": \"json\"}");
  rejectUnknown(v, r.source(), path, {"mode", "fields", "headers"});
  fp::Spec spec;
  if (const json* m = FieldReader::optional(v, "mode")) {
    const auto mode = fp::modeFromName(r.str(*m, member(path, "mode")));
    if (!mode) r.fail(member(path, "mode"), shown(*m) + " is not valid (use \"none\", \"body\", \"json\" or \"fields\")");
    spec.mode = *mode;
  }
  const std::string fieldsPath = member(path, "fields");
  if (const json* f = FieldReader::optional(v, "fields")) spec.fields = pointers(r, *f, fieldsPath);
  if (spec.mode == fp::Mode::Fields && spec.fields.empty())
    r.fail(fieldsPath,
           "required with mode \"fields\": list the JSON pointers that identify a request, e.g. "
           "[\"/amount\", \"/currency\"]");
  if (spec.mode != fp::Mode::Fields && !spec.fields.empty())
    r.fail(fieldsPath, "only used with mode \"fields\" (mode is \"" + std::string(fp::modeName(spec.mode)) +
                           "\"); remove it or set mode to \"fields\"");
  if (const json* h = FieldReader::optional(v, "headers")) spec.headers = r.headerNames(*h, member(path, "headers"));
  return spec;
}

// A match means "the same request" only if the fingerprint tells requests apart: without one
// (mode "none") every request of a route would match the last.
CrossKey readCrossKey(const FieldReader& r, const json& v, const std::string& path, const fp::Spec& fingerprint) {
  r.expect(v, path, json::value_t::object, "an object such as {\"mode\": \"hold\", \"window\": \"60s\"}");
  rejectUnknown(v, r.source(), path, {"mode", "window"});
  CrossKey out;
  const json& m = r.required(v, path, "mode", "\"off\", \"observe\", \"hold\" or \"reject\"");
  const std::string mode = r.str(m, member(path, "mode"));
  if (mode == "observe") out.mode = CrossKeyMode::Observe;
  else if (mode == "hold") out.mode = CrossKeyMode::Hold;
  else if (mode == "reject") out.mode = CrossKeyMode::Reject;
  else if (mode != "off")
    r.fail(member(path, "mode"), shown(m) + " is not valid (use \"off\", \"observe\" to run and record a match, "
                                            "\"hold\" to answer 409 until the client confirms, or \"reject\")");
  if (!out.on()) return out;
  out.window = r.duration(r.required(v, path, "window", "how far back a match counts, e.g. \"60s\""),
                          member(path, "window"));
  if (fingerprint.mode == fp::Mode::None)
    r.fail(path, "needs a fingerprint that tells requests apart (fingerprint mode is \"none\": every request of the "
                 "route would match the last); use \"json\", \"body\" or \"fields\"");
  return out;
}

}  // namespace idem::policy::internal
