// The simulator's config parser (core/sim/config_parse). Any text either is refused with a
// ConfigError naming the field, or gives a config whose report form (configToJson, shown in
// every simulation report) reads back as the same config.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/sim/config_parse.h"
#include "tests/fuzz/fuzz_check.h"

using idem::fuzz::check;
namespace sim = idem::sim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sim::SimConfig config;
  try {
    config = sim::parseConfigText(text);
  } catch (const sim::ConfigError&) {
    return 0;
  }
  const std::string shown = sim::configToJson(config).dump();
  sim::SimConfig reread;
  try {
    reread = sim::parseConfigText(shown);
  } catch (const sim::ConfigError& e) {
    idem::fuzz::fail("the config as reported is refused when read back", std::string(e.what()) + "\n  " + shown);
  }
  check(sim::configToJson(reread).dump() == shown, "the reported config reads back as the same config", shown);
  return 0;
}
