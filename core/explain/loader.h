#pragma once
// Loads a key's history from the store: find it (by key, optionally scoped, or by the
// resource id a customer quotes), then read its generations, events and policies. Read-only:
// works with the console's read-only role and on a hot standby.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/explain/history.h"
#include "core/store/pg.h"

namespace idem::explain {

/// A key in its scope.
struct KeyRef {
  Scope scope;
  std::string key;
  auto operator<=>(const KeyRef&) const = default;
};

/// Nothing in the store matches. what() says what was searched.
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The key (or resource id) exists in several scopes; `candidates` lists them so the caller
/// can ask for one (--scope). what() lists them too.
class Ambiguous : public std::runtime_error {
 public:
  Ambiguous(const std::string& message, std::vector<KeyRef> candidates)
      : std::runtime_error(message), m_candidates(std::move(candidates)) {}
  [[nodiscard]] const std::vector<KeyRef>& candidates() const { return m_candidates; }

 private:
  std::vector<KeyRef> m_candidates;
};

/// Every scope in which `key` has a live or archived generation (sorted). With a scope (its
/// tenant and endpoint), that scope in each service that stored anything (keys, archive, events)
/// for it. With a service, that service's scopes alone.
[[nodiscard]] std::vector<KeyRef> findKey(pg::Connection& conn, const std::string& key,
                                          const std::optional<Scope>& scope = std::nullopt,
                                          const std::optional<std::string>& service = std::nullopt);
/// Every key whose live or archived generation produced `resourceRef` (e.g. "pay_123").
[[nodiscard]] std::vector<KeyRef> findResource(pg::Connection& conn, const std::string& resourceRef);

struct LoadOptions {
  bool responses = false;  ///< also read each generation's stored headers and body
};

/// Everything stored about one key. An unknown key gives an empty history (no generations,
/// no events).
[[nodiscard]] KeyHistory loadHistory(pg::Connection& conn, const KeyRef& ref, LoadOptions options = {});

/// findKey + loadHistory, with the stored responses (each execution's amount is read from its
/// response): throws NotFound, or Ambiguous when no scope is given and the key is
/// in several.
[[nodiscard]] KeyHistory loadByKey(pg::Connection& conn, const std::string& key,
                                   const std::optional<Scope>& scope = std::nullopt,
                                   const std::optional<std::string>& service = std::nullopt);
/// findResource + loadHistory: throws NotFound or Ambiguous.
[[nodiscard]] KeyHistory loadByResource(pg::Connection& conn, const std::string& resourceRef);

}  // namespace idem::explain
