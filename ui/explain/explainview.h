#pragma once
// The Explain tab: core's plain-language narrative of what happened to the key beside the
// timeline, exported for the ticket as Markdown, HTML or PDF.
#include <QSet>
#include <QWidget>
#include <functional>

#include "core/explain/explain.h"
#include "core/explain/letter.h"
#include "ui/explain/reportwriter.h"
#include "ui/keydata/keydetail.h"

class QComboBox;
class QPushButton;
class QTextBrowser;

namespace idem::ui {

class EventModel;
class TimelineWidget;

class ExplainView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ExplainView)

 public:
  using Format = ExplanationReport::Format;
  using Audience = explain::Audience;
  /// The timeline's width in a report, in pixels of the recording (scaled to the page).
  static constexpr int kPrintTimelineWidth = 1000;

  explicit ExplainView(EventModel* model, QWidget* parent = nullptr);
  [[nodiscard]] QString narrativeText() const;
  [[nodiscard]] QString markdown(Audience audience = Audience::Internal) const;
  /// Whom the tab shows the explanation to: support (internal) or the customer.
  [[nodiscard]] Audience audience() const;
  void setAudience(Audience audience);
  [[nodiscard]] TimelineWidget* timeline() const { return m_timeline; }
  /// Who signs the customer's letter, to whom, about which ticket: asked each time a letter is
  /// made (the window reads its settings and the open case). Unset: LetterSettings' defaults.
  using LetterSource = std::function<explain::LetterOptions()>;
  void setLetterSource(LetterSource source);
  /// The customer's letter about the key shown (GUI thread).
  [[nodiscard]] explain::Letter letter() const;
  /// Shows the letter again after its settings or the case changed (support's view, which has
  /// no letter, is not laid out again).
  void refreshLetter() {
    if (audience() == Audience::Customer) rebuild();
  }
  /// The report for audience: the Markdown, the document and, for support, a picture of the
  /// timeline (GUI thread). The customer's is the letter: no timeline, keys or generations.
  [[nodiscard]] ExplanationReport report(Audience audience = Audience::Internal) const;
  /// Writes the report and waits for it; false with *error set when the file cannot be written.
  bool exportTo(const QString& path, Format format, QString* error = nullptr,
                Audience audience = Audience::Internal) const;
  /// Writes the report on a pool thread, then emits exported or exportFailed; the window stays
  /// live meanwhile.
  void exportInBackground(const QString& path, Format format, Audience audience = Audience::Internal);
  /// Asks for a file name, then exports in the background.
  void exportWithDialog(Format format);
  /// Exports the PDF into folder (made when missing) under name, or name-2… when taken, in the
  /// background, without a dialog; returns the path written to ("" when there is nothing to
  /// export or the folder cannot be made: exportFailed says why).
  QString exportToFolder(const QString& folder, const QString& name, Audience audience = Audience::Internal);
  /// Non-empty: every export button is off and says why (no key for this case, stale data…);
  /// a dialog export asked for anyway is refused with that reason.
  void setExportBlocked(const QString& reason);
  [[nodiscard]] const QString& exportBlocked() const { return m_exportBlocked; }
  /// The key the explanation (and so every export) is about.
  [[nodiscard]] const KeyRef& subject() const;

 signals:
  void exported(const QString& path);
  void exportFailed(const QString& path, const QString& error);
  /// The "Export PDF to case folder" button, for the version shown: whoever knows the case
  /// folder exports.
  void caseExportRequested(idem::explain::Audience audience);

 private:
  void rebuild();

  QList<QPushButton*> m_exportButtons;
  QString m_exportBlocked;

  EventModel* m_model;
  TimelineWidget* m_timeline;
  QTextBrowser* m_text;
  QComboBox* m_audience;
  QSet<QString> m_dialogExports;  // paths being written for the dialog
  LetterSource m_letterSource;
};

}  // namespace idem::ui
