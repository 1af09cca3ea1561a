#include "ui/explain/lettersettingsdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>

using namespace Qt::StringLiterals;

namespace idem::ui {

LetterSettingsDialog::LetterSettingsDialog(const LetterSettings& s, QWidget* parent)
    : QDialog(parent),
      m_sender(new QLineEdit(s.sender, this)),
      m_signature(new QPlainTextEdit(s.signature, this)),
      m_refundTiming(new QLineEdit(s.refundTiming, this)),
      m_addressee(new QComboBox(this)) {
  setWindowTitle(tr("Letters to customers"));
  m_sender->setObjectName(u"letterSender"_s);
  m_signature->setObjectName(u"letterSignature"_s);
  m_refundTiming->setObjectName(u"letterRefundTiming"_s);
  m_addressee->setObjectName(u"letterAddressee"_s);
  m_signature->setPlaceholderText(tr("Jane Doe\nCustomer support, Acme Payments\nsupport@example.com"));
  m_signature->setTabChangesFocus(true);
  m_signature->setFixedHeight(m_signature->fontMetrics().lineSpacing() * 5);
  m_addressee->addItem(tr("A platform's merchant (their system sent the requests)"),
                       static_cast<int>(explain::Addressee::Merchant));
  m_addressee->addItem(tr("A consumer (who paid)"), static_cast<int>(explain::Addressee::Consumer));
  m_addressee->setCurrentIndex(m_addressee->findData(static_cast<int>(s.addressee)));
  auto* form = new QFormLayout(this);
  form->addRow(tr("Letters are &addressed to"), m_addressee);
  form->addRow(tr("&Sender (company name)"), m_sender);
  form->addRow(tr("Si&gnature"), m_signature);
  form->addRow(tr("&Refund timing"), m_refundTiming);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  form->addRow(buttons);
  resize(560, sizeHint().height());
}

LetterSettings LetterSettingsDialog::settings() const {
  LetterSettings s;
  s.sender = m_sender->text().trimmed();
  s.signature = m_signature->toPlainText().trimmed();
  s.refundTiming = m_refundTiming->text().trimmed();
  s.addressee = static_cast<explain::Addressee>(m_addressee->currentData().toInt());
  return s;
}

}  // namespace idem::ui
