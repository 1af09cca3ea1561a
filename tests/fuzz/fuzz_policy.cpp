// The policy parser (core/policy/policy_parse). Any text either is refused with a PolicyError
// (nothing else may escape: serve would die at start with an unhelpful message) or gives a
// policy that the rest of Idem can use without failing later, on a request.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

using idem::fuzz::check;
namespace policy = idem::policy;
namespace fp = idem::fp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  policy::Policy p;
  try {
    p = policy::parsePolicy(text, "fuzz.json");
  } catch (const policy::PolicyError& e) {
    check(std::string_view(e.what()).starts_with("fuzz.json"), "a policy error names the file", e.what());
    return 0;
  }

  for (const auto& tier : p.tiers) {
    check(p.tierNamed(tier.name) == &tier, "a tier is found by its name", tier.name);
    for (const auto& route : tier.routes) {
      const auto space = route.find(' ');
      check(space != std::string::npos, "a route is \"METHOD /path\"", route);
      check(p.tierFor(std::string_view(route).substr(0, space), std::string_view(route).substr(space + 1)) == &tier,
            "a route is matched by the tier that lists it", route);
    }
    // A fingerprint the parser accepted must be computable on every request: a spec that
    // throws here would answer 500 to every client of the tier instead of refusing the file.
    try {
      (void)fp::compute(tier.fingerprint, "{}", {});
    } catch (const fp::InvalidJson&) {
      idem::fuzz::fail("the fingerprint of an accepted tier refuses the JSON body {}", tier.name);
    } catch (const std::exception& e) {
      idem::fuzz::fail("the fingerprint of an accepted tier throws on a request", e.what());
    }
  }
  (void)policy::publishedJson(p).dump();
  (void)policy::publishedHtml(p);

  // The policy depends on its document only: the document as recorded in the store parses
  // back to the same policy (same identity).
  const std::string recorded = p.document.dump();
  const policy::Policy again = policy::parsePolicy(recorded, "fuzz.json");
  check(again.sha256() == p.sha256(), "the recorded document parses to the same policy", recorded);
  check(again.tiers.size() == p.tiers.size(), "the recorded document has the same tiers", recorded);
  return 0;
}
