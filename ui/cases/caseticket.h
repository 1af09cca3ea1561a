#pragma once
// The ticket a customer letter quotes: the case the letter's key belongs to. When the open key is
// in the current case (or that case has no key yet, and the key joins it) nothing asks — Ctrl+P
// stays one key. Otherwise the agent types the ticket in a prompt (not a blocking dialog), filled
// with the current case's: a queue of tickets, with the last case still open, asks for the next
// customer's ticket instead of quoting the last one's.
#include <QString>
#include <functional>

class QWidget;

namespace idem::ui {

class CaseBook;
class CasesView;

/// The key a letter is about.
struct LetterKey {
  QString tenant, endpoint, key, resource;
};

/// Calls then(ticket) now with the ticket of the case holding the key, or after the agent typed
/// one: the current case's ticket adds the key to it, another opens a case for it, an empty one
/// gives a letter without a reference line. Cancel: then is not called.
void withCaseTicket(CaseBook* book, CasesView* cases, QWidget* parent, const LetterKey& key,
                    std::function<void(const QString&)> then);

}  // namespace idem::ui
