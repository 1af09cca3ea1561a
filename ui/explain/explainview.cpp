#include "ui/explain/explainview.h"

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QPageLayout>
#include <QPageSize>
#include <QPrinter>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextImageFormat>
#include <QUrl>
#include <QVBoxLayout>

#include "ui/trace/eventmodel.h"
#include "ui/trace/timelinewidget.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

ExplainView::ExplainView(EventModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_timeline(new TimelineWidget(model, this)), m_text(new QTextBrowser(this)) {
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  const std::pair<QString, Format> kinds[] = {
      {tr("Export &Markdown…"), Format::Markdown}, {tr("Export &HTML…"), Format::Html}, {tr("Export &PDF…"), Format::Pdf}};
  for (const auto& [label, format] : kinds) {
    auto* b = new QPushButton(label, this);
    connect(b, &QPushButton::clicked, this, [this, f = format] { exportWithDialog(f); });
    buttons->addWidget(b);
  }
  m_text->setOpenExternalLinks(true);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(u"explainSplitter"_s);
  split->addWidget(m_text);
  split->addWidget(m_timeline);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({600, 600});  // the narrative needs room as much as the timeline
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(buttons);
  layout->addWidget(split, 1);
  connect(model, &QAbstractItemModel::modelReset, this, &ExplainView::rebuild);
  rebuild();
}

QString ExplainView::narrativeText() const { return m_model->detail().narrative(); }
QString ExplainView::markdown() const { return m_model->detail().markdown; }

void ExplainView::rebuild() {
  const KeyDetail& d = m_model->detail();
  if (!d.ref.isValid()) {
    m_text->setHtml(tr("<p><i>Select a key to explain what happened to it.</i></p>"));
  } else if (d.markdown.isEmpty()) {
    m_text->setHtml(tr("<p>No explanation: %1</p>").arg(d.explainError.toHtmlEscaped()));
  } else {
    m_text->setMarkdown(d.markdown);
  }
}

void ExplainView::fillDocument(QTextDocument& doc) const {
  doc.setMarkdown(markdown());
  // The timeline as the agent sees it, so the ticket shows the two executions and the gap.
  const QImage picture = m_timeline->grab().toImage();
  if (!picture.isNull()) {
    doc.addResource(QTextDocument::ImageResource, QUrl(u"timeline.png"_s), picture);
    QTextCursor cursor(&doc);
    cursor.movePosition(QTextCursor::End);
    cursor.insertBlock();
    QTextImageFormat image;
    image.setName(u"timeline.png"_s);
    image.setWidth(std::min(640, picture.width()));
    cursor.insertImage(image);
  }
}

bool ExplainView::exportTo(const QString& path, Format format, QString* error) const {
  if (markdown().isEmpty()) {
    if (error) *error = tr("there is no explanation to export");
    return false;
  }
  if (format == Format::Pdf) {
    QPrinter printer(QPrinter::HighResolution);
    printer.setOutputFormat(QPrinter::PdfFormat);
    printer.setOutputFileName(path);
    printer.setPageSize(QPageSize(QPageSize::A4));
    printer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    printer.setDocName(tr("Idem key %1").arg(m_model->detail().ref.key));
    QTextDocument doc;
    fillDocument(doc);
    doc.print(&printer);
    if (!QFile::exists(path)) {
      if (error) *error = tr("the PDF could not be written to %1").arg(path);
      return false;
    }
    return true;
  }
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = file.errorString();
    return false;
  }
  if (format == Format::Markdown) {
    file.write(markdown().toUtf8());
  } else {
    QTextDocument doc;
    doc.setMarkdown(markdown());
    file.write(doc.toHtml().toUtf8());
  }
  return file.error() == QFileDevice::NoError;
}

void ExplainView::exportWithDialog(Format format) {
  const QString base = u"idem-"_s % m_model->detail().ref.key.left(12);
  const QString suggested = base % (format == Format::Markdown ? u".md"_s : format == Format::Html ? u".html"_s : u".pdf"_s);
  const QString filter = format == Format::Markdown ? tr("Markdown (*.md)")
                         : format == Format::Html   ? tr("HTML (*.html)")
                                                    : tr("PDF (*.pdf)");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export explanation"), suggested, filter);
  if (path.isEmpty()) return;
  QString error;
  if (!exportTo(path, format, &error)) {
    QMessageBox::warning(this, tr("Export failed"),
                         tr("The explanation was not exported: %1.\nChoose another folder and try again.").arg(error));
    return;
  }
  emit exported(path);
}

}  // namespace idem::ui
