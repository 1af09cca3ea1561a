#include "ui/explain/explainview.h"

#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/trace/eventmodel.h"
#include "ui/trace/timelinewidget.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

ExplainView::ExplainView(EventModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_timeline(new TimelineWidget(model, this)), m_text(new QTextBrowser(this)) {
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(u"explainSplitter"_s);
  split->addWidget(m_text);
  split->addWidget(m_timeline);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split, 1);
  connect(model, &QAbstractItemModel::modelReset, this, &ExplainView::rebuild);
  rebuild();
}

QString ExplainView::narrativeText() const { return m_text->toPlainText(); }

void ExplainView::rebuild() {
  if (!m_model->detail().ref.isValid()) {
    m_text->setHtml(tr("<p><i>Select a key to explain what happened to it.</i></p>"));
    return;
  }
  m_text->setHtml(tr("<p>The narrative comes from core's explainer (not wired yet).</p>"));
}

}  // namespace idem::ui
