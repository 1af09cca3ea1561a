#pragma once
// The parts format.cpp assembles, each in its own file: the resolution (for support) and the
// customer's explanation, as JSON, text and Markdown.
#include <string>

#include <nlohmann/json.hpp>

#include "core/explain/explain.h"

namespace idem::explain {

/// The "resolution" member of the internal JSON.
[[nodiscard]] nlohmann::ordered_json resolutionJson(const Resolution& r);
/// "Resolution:" section for the terminal (wrapped at `width`).
[[nodiscard]] std::string resolutionText(const Explanation& x, std::size_t width);
/// "### Resolution" section with a table of the executions.
[[nodiscard]] std::string resolutionMarkdown(const Explanation& x);

/// The "duplicates_across_keys" member of the internal JSON; its "Duplicates across keys:"
/// section for the terminal and "### Duplicates across keys" for Markdown ("" when none).
[[nodiscard]] nlohmann::ordered_json crossKeyJson(const Explanation& x);
[[nodiscard]] std::string crossKeyText(const Explanation& x, std::size_t width);
[[nodiscard]] std::string crossKeyMarkdown(const Explanation& x);

[[nodiscard]] nlohmann::ordered_json customerJson(const Explanation& x);
[[nodiscard]] std::string customerText(const Explanation& x, std::size_t width);
[[nodiscard]] std::string customerMarkdown(const Explanation& x);

/// Words wrapped at `width` columns, each line indented (a terminal).
[[nodiscard]] std::string wrapWords(const std::string& text, std::size_t width, const std::string& indent);
/// Markdown text outside code: the characters Markdown reads as formatting escaped.
[[nodiscard]] std::string markdownText(const std::string& v);
/// Markdown inline code that survives backticks in the value.
[[nodiscard]] std::string markdownCode(const std::string& v);

}  // namespace idem::explain
