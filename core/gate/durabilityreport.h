#pragma once
// The store's durability and each tier's durability setting, as /healthz JSON and as /metrics
// lines (serve and the proxy's admin listener share them through Service).
#include <nlohmann/json.hpp>
#include <string>

#include "core/enforce/durabilitygate.h"
#include "core/policy/policy.h"
#include "core/store/durability.h"

namespace idem::gate {

/// {"level", "synchronous", "meaning", the settings, standbys, lags}: what the store gives.
[[nodiscard]] nlohmann::json durabilityStoreJson(const store::Durability& d);
/// durabilityStoreJson plus "tiers": [...]; each tier that
/// asks for synchronous durability with whether the store meets it and what it does if not.
[[nodiscard]] nlohmann::json durabilityJson(const store::Durability& d, const policy::Policy& policy,
                                            const enforce::DurabilityGate& gate);
/// The sentences an operator must read: one per tier whose durability setting is not met.
[[nodiscard]] std::vector<std::string> durabilityWarnings(const store::Durability& d, const policy::Policy& policy);
/// Prometheus lines: idem_store_durability_synchronous, idem_store_standbys, idem_store_replay_lag_seconds,
/// idem_tier_durability_met{tier} and the refused / served-weaker counters.
[[nodiscard]] std::string durabilityMetrics(const std::optional<store::Durability>& d, const policy::Policy& policy,
                                            const enforce::DurabilityGate& gate);

}  // namespace idem::gate
