#pragma once
// Policy texts for the unit suites that parse them: written with ' for " (moc, which scans the
// suites, reads raw strings as ordinary ones, so a multi-line raw string or a // inside one
// hides the test class from it), and the error a text gets.
#include <QString>
#include <algorithm>
#include <string>

#include "core/policy/policy.h"

namespace idem::test {

inline std::string q(std::string text) {
  std::replace(text.begin(), text.end(), '\'', '"');
  return text;
}

/// The PolicyError message for `text` read as the file `source`, or an empty string when it parses.
inline QString policyErrorOf(const std::string& text, const std::string& source) {
  try {
    (void)policy::parsePolicy(text, source);
  } catch (const policy::PolicyError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace idem::test
