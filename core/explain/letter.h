#pragma once
// The customer's explanation as a letter a company can send: who writes (the sender and the
// signature), when (the date), about what (a readable title with the amount, the ticket
// reference), the story in words for its reader (a platform's merchant or a consumer), what will
// be done and when the money arrives. Pure: the renderers (Markdown here, the console's PDF)
// lay it out.
#include <string>
#include <vector>

#include "core/explain/explain.h"

namespace idem::explain {

struct LetterOptions {
  Addressee to = Addressee::Merchant;
  std::string sender;        ///< "Acme Payments": the letterhead; the signature when none is given
  std::string signature;     ///< lines under the closing ("Jane Doe\nCustomer support"); "" → the sender
  std::string ticket;        ///< the support ticket, "SUP-4411"; "" → no reference line
  std::string refundTiming;  ///< "Refunds reach your account within 5–10 business days."; said after a refund
  Instant date;              ///< when it is written; shown as a date in the explanation's zone
};

struct Letter {
  struct Line {
    std::string when;  ///< "4 Dec 2026, 11:05 UTC"
    std::string text;
  };
  std::string sender;
  std::string date;       ///< "6 Dec 2026"
  std::string reference;  ///< "Ticket SUP-4411", "" without a ticket
  std::string title;      ///< "Your payment of $2,499.00 on 4 Dec 2026: charged twice"
  std::string greeting;   ///< "Dear customer,"
  std::string summary;
  std::vector<Line> timeline;
  std::string action;  ///< with the refund timing when a refund is promised
  std::string advice;  ///< "" for a consumer
  std::string references;  ///< "Charges: pay_1, pay_2" (to quote in a reply), "" when none
  std::string closing;     ///< "Kind regards,"
  std::vector<std::string> signature;
};

/// The letter about x for o.to, in x.zone.
[[nodiscard]] Letter composeLetter(const Explanation& x, const LetterOptions& o);
/// The letter as Markdown (sender and date first, then the title, the body and the signature).
[[nodiscard]] std::string letterMarkdown(const Letter& letter);

}  // namespace idem::explain
