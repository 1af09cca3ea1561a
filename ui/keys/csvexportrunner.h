#pragma once
// Runs one CSV export on a connection of its own (so browsing stays responsive), with a
// progress dialog whose Cancel really stops the export.
#include <QObject>
#include <memory>

#include "ui/common/connectparams.h"
#include "ui/keys/csvexport.h"

class QProgressDialog;
class QTimer;
class QWidget;

namespace idem::ui {

class DbSession;

class CsvExportRunner final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(CsvExportRunner)

 public:
  CsvExportRunner(const ConnectParams& params, const KeyFilter& filter, const QString& path, QWidget* parent);
  ~CsvExportRunner() override;
  void start();

 signals:
  void finished(const QString& summary);

 private:
  ConnectParams m_params;
  KeyFilter m_filter;
  QString m_path;
  std::shared_ptr<ExportProgress> m_progress;  // shared with the worker thread's job
  DbSession* m_session;
  QProgressDialog* m_dialog;
  QTimer* m_poll;
  quint64 m_ticket = 0;
};

}  // namespace idem::ui
