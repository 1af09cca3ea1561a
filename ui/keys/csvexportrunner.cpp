#include "ui/keys/csvexportrunner.h"

#include <QLocale>
#include <QProgressDialog>
#include <QTimer>

#include "ui/common/dbsession.h"

namespace idem::ui {

CsvExportRunner::CsvExportRunner(const ConnectParams& params, const KeyFilter& filter, const QString& path,
                                 QWidget* parent)
    : QObject(parent), m_params(params), m_filter(filter), m_path(path),
      m_progress(std::make_shared<ExportProgress>()), m_session(new DbSession(QStringLiteral("csv-export"), this)),
      m_dialog(new QProgressDialog(tr("Exporting keys…"), tr("Cancel"), 0, 0, parent)), m_poll(new QTimer(this)) {
  m_dialog->setWindowModality(Qt::WindowModal);
  m_dialog->setMinimumDuration(300);
  m_poll->setInterval(200);
  connect(m_poll, &QTimer::timeout, this, [this] {
    m_dialog->setLabelText(tr("Exporting keys… %1 rows").arg(QLocale().toString(m_progress->rows.load())));
  });
  connect(m_dialog, &QProgressDialog::canceled, this, [this] {
    m_progress->cancel.store(true);
    m_session->cancel(m_ticket);
  });
}

CsvExportRunner::~CsvExportRunner() { delete m_dialog; }

void CsvExportRunner::start() {
  m_session->open(m_params);
  auto progress = m_progress;
  const KeyFilter filter = m_filter;
  const QString path = m_path;
  m_poll->start();
  m_ticket = m_session->submit<qint64>(
      this, [progress, filter, path](pg::Connection& conn) { return exportKeysCsv(conn, filter, path, *progress); },
      [this](DbResult<qint64> result) {
        m_poll->stop();
        m_dialog->reset();
        if (m_progress->cancel.load())
          emit finished(tr("Export cancelled after %1 rows; %2 is incomplete.")
                            .arg(QLocale().toString(m_progress->rows.load()), m_path));
        else if (!result.ok())
          emit finished(tr("Export failed: %1").arg(result.error.message));
        else
          emit finished(tr("Exported %1 keys to %2").arg(QLocale().toString(*result.value), m_path));
      });
}

}  // namespace idem::ui
