#pragma once
// The Explain tab: core's plain-language narrative of what happened to the key beside the
// timeline, exported for the ticket as Markdown, HTML or PDF.
#include <QWidget>

class QTextBrowser;
class QTextDocument;

namespace idem::ui {

class EventModel;
class TimelineWidget;

class ExplainView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ExplainView)

 public:
  enum class Format { Markdown, Html, Pdf };

  explicit ExplainView(EventModel* model, QWidget* parent = nullptr);
  [[nodiscard]] QString narrativeText() const;
  [[nodiscard]] QString markdown() const;
  [[nodiscard]] TimelineWidget* timeline() const { return m_timeline; }
  /// Writes the report; false with *error set when the file cannot be written.
  bool exportTo(const QString& path, Format format, QString* error = nullptr) const;
  /// Asks for a file name, then exports.
  void exportWithDialog(Format format);

 signals:
  void exported(const QString& path);

 private:
  void rebuild();
  /// The report as a document: the Markdown, with the timeline picture under it.
  void fillDocument(QTextDocument& doc) const;

  EventModel* m_model;
  TimelineWidget* m_timeline;
  QTextBrowser* m_text;
};

}  // namespace idem::ui
