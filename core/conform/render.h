#pragma once
// A conformance report as text (a terminal: one line per scenario, the evidence of failures),
// JSON (CI: every exchange) or Markdown (a ticket or a pull request).
#include <string>

#include "core/conform/kit.h"
#include "core/text/outputformat.h"

namespace idem::conform {

[[nodiscard]] std::string render(const Report& report, text::OutputFormat format);

}  // namespace idem::conform
