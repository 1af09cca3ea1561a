#include "ui/explain/explainview.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QBuffer>
#include <QComboBox>
#include <QPainter>
#include <QSvgGenerator>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/cases/casefolder.h"
#include "ui/common/filework.h"
#include "ui/explain/letterhtml.h"
#include "ui/explain/lettersettings.h"
#include "ui/explain/reporthtml.h"
#include "ui/trace/eventmodel.h"
#include "ui/trace/timelinewidget.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

ExplainView::ExplainView(EventModel* model, QWidget* parent)
    : QWidget(parent),
      m_model(model),
      m_timeline(new TimelineWidget(model, this)),
      m_text(new QTextBrowser(this)),
      m_audience(new QComboBox(this)) {
  auto* buttons = new QHBoxLayout;
  m_audience->setObjectName(u"audience"_s);
  m_audience->addItem(tr("For support"), static_cast<int>(Audience::Internal));
  m_audience->addItem(tr("For the customer"), static_cast<int>(Audience::Customer));
  m_audience->setToolTip(tr("Support sees keys, generations, leases and request ids; the customer's version "
                            "has none of them. The exports below write the version shown."));
  connect(m_audience, &QComboBox::currentIndexChanged, this, &ExplainView::rebuild);
  buttons->addWidget(m_audience);
  // The one-action export of a support case (Ctrl+P anywhere in the window exports the
  // customer's version the same way).
  auto* toCase = new QPushButton(tr("Export PDF to &case folder"), this);
  toCase->setObjectName(u"exportToCaseFolder"_s);
  toCase->setToolTip(tr("Writes the version shown as PDF into the case folder (Settings), named after the key "
                        "— no dialog. Ctrl+P writes the customer's version."));
  connect(toCase, &QPushButton::clicked, this, [this] { emit caseExportRequested(audience()); });
  buttons->addWidget(toCase);
  m_exportButtons << toCase;
  buttons->addStretch(1);
  const std::pair<QString, Format> kinds[] = {
      {tr("Export &Markdown…"), Format::Markdown}, {tr("Export &HTML…"), Format::Html}, {tr("Export &PDF…"), Format::Pdf}};
  for (const auto& [label, format] : kinds) {
    auto* b = new QPushButton(label, this);
    connect(b, &QPushButton::clicked, this, [this, f = format] { exportWithDialog(f); });
    buttons->addWidget(b);
    m_exportButtons << b;
  }
  for (auto* b : std::as_const(m_exportButtons)) b->setProperty("idleToolTip", b->toolTip());
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
  // An export the user asked for through the dialog says so when it fails; others only signal.
  connect(this, &ExplainView::exported, this, [this](const QString& path) { m_dialogExports.remove(path); });
  connect(this, &ExplainView::exportFailed, this, [this](const QString& path, const QString& error) {
    if (!m_dialogExports.remove(path)) return;
    QMessageBox::warning(this, tr("Export failed"),
                         tr("The explanation was not exported: %1.\nChoose another folder and try again.").arg(error));
  });
  rebuild();
}

const KeyRef& ExplainView::subject() const { return m_model->detail().ref; }

QString ExplainView::narrativeText() const { return m_model->detail().narrative(); }
QString ExplainView::markdown(Audience audience) const {
  return audience == Audience::Customer ? m_model->detail().customerMarkdown : m_model->detail().markdown;
}

ExplainView::Audience ExplainView::audience() const {
  return static_cast<Audience>(m_audience->currentData().toInt());
}

void ExplainView::setAudience(Audience audience) {
  m_audience->setCurrentIndex(m_audience->findData(static_cast<int>(audience)));
}

void ExplainView::rebuild() {
  const KeyDetail& d = m_model->detail();
  if (!d.ref.isValid()) {
    m_text->setHtml(tr("<p><i>Select a key to explain what happened to it.</i></p>"));
  } else if (d.markdown.isEmpty()) {
    m_text->setHtml(tr("<p>No explanation: %1</p>").arg(d.explainError.toHtmlEscaped()));
  } else if (audience() == Audience::Customer) {
    m_text->setHtml(letterHtml(letter()));  // what the PDF prints
  } else {
    // The document the exports print, less the timeline (it is beside the text): tables
    // whose cells never wrap (headers read whole; the view scrolls sideways when narrow).
    m_text->setHtml(reportHtml(m_model->sharedDetail()).replace(QLatin1String(kTimelinePlaceholder), QString()));
  }
  // The timeline shows generations and leases: support's view only.
  m_timeline->setVisible(audience() == Audience::Internal);
}

void ExplainView::setLetterSource(LetterSource source) {
  m_letterSource = std::move(source);
  rebuild();
}

explain::Letter ExplainView::letter() const {
  const explain::LetterOptions options =
      m_letterSource ? m_letterSource() : LetterSettings::defaults().options(QString());
  return explain::composeLetter(m_model->detail().explanation, options);
}

ExplanationReport ExplainView::report(Audience audience) const {
  ExplanationReport r;
  r.markdown = markdown(audience);
  if (audience == Audience::Customer) {
    if (r.markdown.isEmpty()) return r;
    const explain::Letter l = letter();
    r.title = QString::fromStdString(l.title);
    r.markdown = QString::fromStdString(explain::letterMarkdown(l));
    r.html = letterHtml(l);
    return r;
  }
  r.title = tr("Idem key %1").arg(m_model->detail().ref.key);
  if (r.markdown.isEmpty()) return r;
  r.html = reportHtml(m_model->sharedDetail());
  // The timeline for the page, not the screen: a widget of its own at a print size (whole
  // legend on one line, every generation fitted), in print colours, recorded as vectors.
  TimelineWidget print(m_model);
  print.setAttribute(Qt::WA_DontShowOnScreen);
  QPalette paper = print.palette();
  paper.setColor(QPalette::Base, Qt::white);
  paper.setColor(QPalette::Window, Qt::white);
  paper.setColor(QPalette::Text, QColor(0x11, 0x11, 0x11));
  paper.setColor(QPalette::WindowText, QColor(0x11, 0x11, 0x11));
  paper.setColor(QPalette::Mid, QColor(0xb0, 0xb0, 0xb0));
  print.setPalette(paper);
  QFont font = print.font();
  font.setPointSizeF(9);
  print.setFont(font);
  const QSize size(kPrintTimelineWidth, print.sizeHint().height());
  print.resize(size);
  print.fitAll();
  QBuffer svg(&r.timelineSvg);
  svg.open(QIODevice::WriteOnly);
  QSvgGenerator generator;
  generator.setOutputDevice(&svg);
  generator.setSize(size);
  generator.setViewBox(QRect(QPoint(0, 0), size));
  generator.setResolution(96);
  generator.setTitle(tr("Timeline of key %1").arg(m_model->detail().ref.key));
  QPainter painter(&generator);
  print.render(&painter);
  painter.end();
  return r;
}

bool ExplainView::exportTo(const QString& path, Format format, QString* error, Audience audience) const {
  return writeReport(report(audience), path, format, error);
}

void ExplainView::exportInBackground(const QString& path, Format format, Audience audience) {
  // The error text is the second half of the result; empty when the file was written.
  runFileWork<std::pair<bool, QString>>(
      this,
      [report = report(audience), path, format] {
        QString error;
        const bool ok = writeReport(report, path, format, &error);
        return std::pair{ok, error};
      },
      [this, path](std::pair<bool, QString> result) {
        if (result.first)
          emit exported(path);
        else
          emit exportFailed(path, result.second);
      });
}

QString ExplainView::exportToFolder(const QString& folder, const QString& name, Audience audience) {
  if (markdown(audience).isEmpty()) {
    emit exportFailed(QString(), tr("there is no explanation to export"));
    return {};
  }
  if (!QDir().mkpath(folder)) {
    emit exportFailed(folder, tr("the case folder %1 cannot be created").arg(folder));
    return {};
  }
  const QString path = freePath(folder, name);
  // Claim the name now: a second export before this one is written gets name-2.
  QFile claim(path);
  if (!claim.open(QIODevice::WriteOnly | QIODevice::NewOnly)) {
    emit exportFailed(path, claim.errorString());
    return {};
  }
  claim.close();
  exportInBackground(path, Format::Pdf, audience);
  return path;
}

void ExplainView::setExportBlocked(const QString& reason) {
  m_exportBlocked = reason;
  for (auto* b : std::as_const(m_exportButtons)) {
    b->setEnabled(reason.isEmpty());
    // The reason rides on the button: a disabled button that does not say why looks broken.
    b->setToolTip(reason.isEmpty() ? b->property("idleToolTip").toString() : reason);
  }
}

void ExplainView::exportWithDialog(Format format) {
  if (!m_exportBlocked.isEmpty()) {
    emit exportFailed(QString(), m_exportBlocked);
    return;
  }
  const QString base = u"idem-"_s % m_model->detail().ref.key.left(12);
  const QString suggested = base % (format == Format::Markdown ? u".md"_s : format == Format::Html ? u".html"_s : u".pdf"_s);
  const QString filter = format == Format::Markdown ? tr("Markdown (*.md)")
                         : format == Format::Html   ? tr("HTML (*.html)")
                                                    : tr("PDF (*.pdf)");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export explanation"), suggested, filter);
  if (path.isEmpty()) return;
  m_dialogExports.insert(path);
  exportInBackground(path, format, audience());
}

}  // namespace idem::ui
