#include "ui/cases/caseticket.h"

#include <QInputDialog>

#include "ui/cases/casebook.h"
#include "ui/cases/casesview.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

void withCaseTicket(CaseBook* book, CasesView* cases, QWidget* parent, std::function<void(const QString&)> then) {
  if (const QString ticket = book->currentTicket(); !ticket.isEmpty()) {
    then(ticket);
    return;
  }
  auto* ask = new QInputDialog(parent);
  ask->setObjectName(u"ticketPrompt"_s);
  ask->setAttribute(Qt::WA_DeleteOnClose);
  ask->setWindowTitle(QObject::tr("Ticket reference"));
  ask->setLabelText(QObject::tr("The support ticket this letter answers (it opens a case for it; leave empty for a "
                                "letter without a reference):"));
  ask->setWindowModality(Qt::WindowModal);
  QObject::connect(ask, &QInputDialog::textValueSelected, parent, [cases, then](const QString& text) {
    const QString ticket = text.trimmed();
    if (!ticket.isEmpty()) cases->newCase(ticket);
    then(ticket);
  });
  ask->open();
}

}  // namespace idem::ui
