#pragma once
// Internal to core/policy: what makes two requests "the same" in a tier — its `fingerprint`
// (the same request under one key) and its `cross_key` (the same request under another key,
// docs/policy.md "Duplicates across keys"), which means something only with a fingerprint that
// tells requests apart.
#include <nlohmann/json.hpp>
#include <string>

#include "core/fingerprint/fingerprint.h"
#include "core/policy/policy.h"
#include "core/policy/policy_fields.h"

namespace idem::policy::internal {

/// A tier's "fingerprint" member.
[[nodiscard]] fp::Spec readFingerprint(const FieldReader& r, const nlohmann::json& v, const std::string& path);
/// A tier's "cross_key" member, checked against the tier's fingerprint.
[[nodiscard]] CrossKey readCrossKey(const FieldReader& r, const nlohmann::json& v, const std::string& path,
                                    const fp::Spec& fingerprint);

}  // namespace idem::policy::internal
