#include "core/http/requestid.h"

#include <cstdint>
#include <random>

namespace idem::http {

std::string newRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "req_";
  std::uint64_t bits = rng();
  for (int i = 0; i < 20; ++i, bits >>= 4) {
    if (i == 16) bits = rng();  // 16 digits per 64 random bits
    id += kHex[bits & 15];
  }
  return id;
}

}  // namespace idem::http
