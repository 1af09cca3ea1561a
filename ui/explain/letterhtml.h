#pragma once
// A letter to a customer (core/explain/letter.h) as an HTML document laid out for the page:
// the sender and the date at the top, the ticket, a title in the letter's own font, the story,
// what will be done, the signature. What the customer-facing PDF and the Explain tab show.
#include <QString>

#include "core/explain/letter.h"

namespace idem::ui {

/// The whole document, <html> to </html>.
[[nodiscard]] QString letterHtml(const explain::Letter& letter);

}  // namespace idem::ui
