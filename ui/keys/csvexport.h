#pragma once
// Exports every key the filter matches to CSV, page by page (keyset), on a worker thread;
// progress and cancel go through atomics shared with the GUI thread.
#include <QString>
#include <atomic>

#include "core/store/pg.h"
#include "ui/keys/keyfilter.h"

namespace idem::ui {

struct ExportProgress {
  std::atomic<qint64> rows{0};
  std::atomic<bool> cancel{false};
};

/// Writes the header and the rows; returns the number of rows written. Throws
/// std::runtime_error when the file cannot be written. Stops early when progress.cancel.
qint64 exportKeysCsv(pg::Connection& conn, const KeyFilter& filter, const QString& path, ExportProgress& progress);

/// One CSV field: quoted when it holds a comma, quote or line break (RFC 4180).
[[nodiscard]] QString csvField(const QString& value);

}  // namespace idem::ui
