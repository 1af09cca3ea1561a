#include "ui/cases/caseticket.h"

#include <QInputDialog>
#include <QLabel>

#include "ui/cases/casebook.h"
#include "ui/cases/casesview.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

void withCaseTicket(CaseBook* book, CasesView* cases, QWidget* parent, const LetterKey& key,
                    std::function<void(const QString&)> then) {
  book->joinCurrentCaseIfFirst(key.tenant, key.endpoint, key.key, key.resource);
  if (const QString ticket = book->ticketFor(key.tenant, key.endpoint, key.key); !ticket.isEmpty()) {
    then(ticket);
    return;
  }
  const QString current = book->currentTicket();
  auto* ask = new QInputDialog(parent);
  ask->setObjectName(u"ticketPrompt"_s);
  ask->setAttribute(Qt::WA_DeleteOnClose);
  ask->setWindowTitle(QObject::tr("Ticket reference"));
  ask->setLabelText(current.isEmpty()
                        ? QObject::tr("The support ticket this letter answers (it opens a case for it; leave empty for "
                                      "a letter without a reference):")
                        : QObject::tr("The open case, %1, is about another key. The ticket this letter answers (keep "
                                      "%1 to add this key to it; leave empty for a letter without a reference):")
                              .arg(current));
  ask->setTextValue(current);
  // The label says why it asks; wrapped, the dialog keeps a reading width instead of one long line.
  if (auto* label = ask->findChild<QLabel*>()) label->setWordWrap(true);
  ask->setWindowModality(Qt::WindowModal);
  QObject::connect(ask, &QInputDialog::textValueSelected, parent, [book, cases, key, current, then](const QString& text) {
    const QString ticket = text.trimmed();
    if (!ticket.isEmpty() && ticket != current) cases->newCase(ticket);
    if (!ticket.isEmpty()) book->addKey(book->currentCase(), key.tenant, key.endpoint, key.key, key.resource);
    then(ticket);
  });
  ask->open();
}

}  // namespace idem::ui
