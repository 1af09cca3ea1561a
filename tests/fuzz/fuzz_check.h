#pragma once
// What every fuzz target uses to state an invariant: a broken one prints what broke and
// aborts, which libFuzzer records as a crash with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace idem::fuzz {

[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  if (!detail.empty()) std::fprintf(stderr, "  %.*s\n", static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void check(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) fail(what, detail);
}

}  // namespace idem::fuzz
