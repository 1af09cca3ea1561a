#pragma once
// The explanation for the customer who asked: plain words, the ids and times they know, what
// happened and what will be done — no key, no generation, no lease, no request id, no policy.
#include <optional>
#include <string>
#include <vector>

#include "core/explain/history.h"

namespace idem::explain {

/// Whom the customer's words address: a platform's merchant, whose system sent the requests
/// ("your system sent the same request again"), or a consumer, who paid and retried nothing
/// ("the same payment was sent to us again"; no advice on retries).
enum class Addressee { Merchant, Consumer };

struct CustomerExplanation {
  struct Line {
    Instant at;
    std::string text;  ///< without the time: renderers put it in front, JSON beside as ISO-8601
  };
  std::vector<std::string> references;  ///< the resource ids it names, in order
  std::string summary;                  ///< "Your request was processed twice: …"
  std::vector<Line> timeline;
  std::string action;                   ///< what will be done: "We will refund pay_456."
  std::string advice;                   ///< how the customer avoids it, "" when nothing applies
};

}  // namespace idem::explain
