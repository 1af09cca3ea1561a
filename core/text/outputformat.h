#pragma once
// The output formats idemctl's reports share: text for a terminal, JSON for tools, Markdown
// for a ticket or a decision document.
#include <optional>
#include <string_view>

namespace idem::text {

enum class OutputFormat { Text, Json, Markdown };

/// "text" | "json" | "markdown" (also "md"); nullopt otherwise.
[[nodiscard]] inline std::optional<OutputFormat> parseOutputFormat(std::string_view name) {
  if (name == "text") return OutputFormat::Text;
  if (name == "json") return OutputFormat::Json;
  if (name == "markdown" || name == "md") return OutputFormat::Markdown;
  return std::nullopt;
}

}  // namespace idem::text
