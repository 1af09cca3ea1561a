#include "ui/detail/responseview.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTreeWidget>

#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

ResponseView::ResponseView(QWidget* parent)
    : QWidget(parent), m_generation(new QComboBox(this)), m_status(new QLabel(this)), m_headers(new QTreeWidget(this)),
      m_body(new QPlainTextEdit(this)) {
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Generation:"), this));
  top->addWidget(m_generation);
  top->addWidget(m_status, 1);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_generation->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "1 (archived)" whole
  m_headers->setHeaderLabels({tr("Header"), tr("Value")});
  m_headers->setRootIsDecorated(false);
  m_headers->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  m_body->setReadOnly(true);
  m_body->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_body->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(u"responseSplitter"_s);
  split->addWidget(m_headers);
  split->addWidget(m_body);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(split, 1);
  connect(m_generation, &QComboBox::currentIndexChanged, this, &ResponseView::showGeneration);
}

QString ResponseView::bodyText() const { return m_body->toPlainText(); }

QString ResponseView::formatBody(const QByteArray& body) {
  if (body.isEmpty()) return {};
  QJsonParseError err;
  const QJsonDocument doc = QJsonDocument::fromJson(body, &err);
  if (err.error == QJsonParseError::NoError) return QString::fromUtf8(doc.toJson(QJsonDocument::Indented));
  const QString text = QString::fromUtf8(body);
  if (!text.contains(QChar::ReplacementCharacter)) return text;
  return QString::fromLatin1(body.toHex(' '));
}

void ResponseView::setDetail(SharedKeyDetail detail, int generation) {
  m_detail = std::move(detail);
  const KeyDetail& d = *m_detail;
  const QSignalBlocker block(m_generation);
  m_generation->clear();
  int pick = -1;
  for (std::size_t i = 0; i < d.generations().size(); ++i) {
    const explain::Generation& g = d.generations()[i];
    m_generation->addItem(g.live ? tr("%1 (live)").arg(g.number) : tr("%1 (archived)").arg(g.number));
    if (g.live || pick < 0) pick = static_cast<int>(i);
  }
  // The generation asked for wins over the live one: a search by generation 1's resource id
  // is about generation 1's response.
  for (std::size_t i = 0; i < d.generations().size(); ++i)
    if (generation > 0 && d.generations()[i].number == generation) pick = static_cast<int>(i);
  if (pick < 0) pick = m_generation->count() - 1;
  m_generation->setCurrentIndex(pick);
  showGeneration(pick);
}

int ResponseView::shownGeneration() const {
  const int index = m_generation->currentIndex();
  return (index >= 0 && index < static_cast<int>(m_detail->generations().size()))
             ? m_detail->generations()[static_cast<std::size_t>(index)].number
             : 0;
}

void ResponseView::showGeneration(int index) {
  m_headers->clear();
  m_body->clear();
  if (index < 0 || index >= static_cast<int>(m_detail->generations().size())) {
    m_status->setText(m_detail->ref.isValid() ? tr("This key has no stored generation.") : QString());
    return;
  }
  const explain::Generation& g = m_detail->generations()[static_cast<std::size_t>(index)];
  if (g.state == "processing" && !g.status) {
    m_status->setText(tr("Still processing: no response stored yet."));
  } else if (!g.status) {
    m_status->setText(tr("No response stored."));
  } else {
    QString text = tr("<b>%1</b> stored %2").arg(*g.status).arg(formatAbsolute(toDateTime(g.completedAt)));
    if (g.resourceRef && !g.resourceRef->empty())
      text += u" · "_s % tr("resource <b>%1</b>").arg(QString::fromStdString(*g.resourceRef).toHtmlEscaped());
    if (g.bodyDroppedAt)
      text += u" · "_s % tr("body dropped %1").arg(formatAbsolute(toDateTime(g.bodyDroppedAt)));
    m_status->setText(text);
  }
  // The store keeps headers as [[name, value], ...] (order and repeats preserved).
  const QJsonArray headers = QJsonDocument::fromJson(QByteArray::fromStdString(g.headersJson)).array();
  for (const QJsonValue& pair : headers) {
    const QJsonArray nv = pair.toArray();
    if (nv.size() == 2) new QTreeWidgetItem(m_headers, {nv.at(0).toString(), nv.at(1).toString()});
  }
  m_body->setPlainText(formatBody(QByteArray::fromStdString(g.body)));
}

}  // namespace idem::ui
