#pragma once
// `idemctl simulate --tiers POLICY`: one scenario's clients against each tier of an Idem policy
// file (its TTL, lease and cross_key), with the duplicate executions each tier lets through and
// what the same tier would let through with cross-key detection switched the other way.
#include <ostream>
#include <string>

#include "core/sim/config.h"

namespace idemctl {

/// Writes the table (text) or a JSON list; returns the process's exit code. A policy file that
/// does not load is reported on `err` with every problem (exit 2).
int simulateTiers(const idem::sim::SimConfig& config, const std::string& policyPath, const std::string& format,
                  std::ostream& out, std::ostream& err);

}  // namespace idemctl
