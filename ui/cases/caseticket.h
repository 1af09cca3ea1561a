#pragma once
// The ticket a customer letter quotes: the open case's. When no case is open the agent types
// one in a prompt (not a blocking dialog) and a case is opened for it; with a case open, nothing
// asks — Ctrl+P stays one key.
#include <QString>
#include <functional>

class QWidget;

namespace idem::ui {

class CaseBook;
class CasesView;

/// Calls then(ticket) now with the open case's ticket, or after the agent typed one (then an
/// empty ticket is allowed: the letter has no reference line). Cancel: then is not called.
void withCaseTicket(CaseBook* book, CasesView* cases, QWidget* parent, std::function<void(const QString&)> then);

}  // namespace idem::ui
