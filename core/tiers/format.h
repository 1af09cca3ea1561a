#pragma once
// A tiers report as JSON (stable field names, for scripts), Markdown (for a ticket or a
// decision document) and plain text (for a terminal).
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/text/outputformat.h"
#include "core/tiers/tiers.h"

namespace idem::tiers {

using Format = text::OutputFormat;


[[nodiscard]] nlohmann::json whatIfJson(const WhatIf& w);
[[nodiscard]] nlohmann::json toJson(const Report& report);
[[nodiscard]] std::string render(const Report& report, Format format);

/// "2026-12-02T09:41:07Z" from epoch milliseconds.
[[nodiscard]] std::string isoTime(long long epochMs);

}  // namespace idem::tiers
