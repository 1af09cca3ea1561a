#pragma once
// Finding a key from what a person has at hand: the key, the resource id a customer quotes
// (pay_…), or the first characters of either. One search for the console's Ctrl+K and for
// `idemctl explain --key/--resource`. Read-only; every lookup is served by an index.
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/loader.h"
#include "core/store/pg.h"

namespace idem::explain {

/// One stored generation a search found.
struct KeyMatch {
  enum class By { Key, Resource, Prefix };
  KeyRef ref;
  int generation = 0;
  bool archived = false;
  std::string resourceRef;  // "" when the generation has none
  By by = By::Key;
};

struct SearchOptions {
  bool byKey = true;       // the text is the key
  bool byResource = true;  // the text is a generation's resource_ref
  bool prefix = false;     // nothing matched exactly: keys and resource ids starting with the text
  int limit = 0;           // 0: every match
};

/// Exact matches first, live generations before archived ones, then by scope and generation
/// (newest first). Empty or blank text finds nothing.
[[nodiscard]] std::vector<KeyMatch> searchKeys(pg::Connection& conn, std::string_view text,
                                               const SearchOptions& options = {});

/// Escapes LIKE's wildcards so that `prefix` matches literally, then appends '%'.
[[nodiscard]] std::string likePrefixPattern(std::string_view prefix);

}  // namespace idem::explain
