#pragma once
// The discrete-event simulation: operations arrive, send attempts, the server queues and
// answers them, the key store decides execute / replay / 409, clients back off and retry.
#include <atomic>
#include <functional>

#include "core/sim/config.h"
#include "core/sim/result.h"

namespace idem::sim {

struct RunControl {
  /// Called now and then with the fraction of operations started so far (0..1).
  std::function<void(double)> onProgress;
  /// Set from another thread to stop early; the result then has cancelled = true.
  const std::atomic<bool>* cancel = nullptr;
};

/// Runs one simulation. Deterministic: the same config (seed included) gives the same result.
[[nodiscard]] Result simulate(const SimConfig& config, const RunControl& control = {});

}  // namespace idem::sim
