#include "ui/keys/csvexport.h"

#include <QFile>
#include <QTextStream>
#include <stdexcept>

#include "ui/keys/keyquery.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

QString csvField(const QString& value) {
  if (!value.contains(u',') && !value.contains(u'"') && !value.contains(u'\n') && !value.contains(u'\r')) return value;
  QString quoted = value;
  quoted.replace(u"\""_s, u"\"\""_s);
  return u"\""_s % quoted % u"\""_s;
}

qint64 exportKeysCsv(pg::Connection& conn, const KeyFilter& filter, const QString& path, ExportProgress& progress) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text))
    throw std::runtime_error(QObject::tr("cannot write %1: %2").arg(path, file.errorString()).toStdString());
  QTextStream out(&file);
  out << "tenant,endpoint,key,generation,tier,state,archived,status,resource_ref,created_at,expires_at,lease_until,"
         "archived_at\n";
  auto iso = [](const QDateTime& t) { return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString(); };
  std::optional<KeyCursor> cursor;
  qint64 written = 0;
  constexpr int kPage = 5000;
  while (!progress.cancel.load()) {
    const auto rows = fetchKeyPage(conn, filter, cursor, false, kPage);
    for (const auto& r : rows) {
      const QStringList fields{r.tenant,        r.endpoint,       r.key,          QString::number(r.generation),
                               r.tier,          r.state,          r.archived ? u"true"_s : u"false"_s,
                               r.status ? QString::number(r.status) : QString(), r.resourceRef, iso(r.created),
                               iso(r.expires), iso(r.leaseUntil), iso(r.archivedAt)};
      QStringList quoted;
      for (const auto& f : fields) quoted << csvField(f);
      out << quoted.join(u',') << '\n';
    }
    written += static_cast<qint64>(rows.size());
    progress.rows.store(written);
    if (static_cast<int>(rows.size()) < kPage) break;
    cursor = KeyCursor::of(rows.back());
  }
  out.flush();
  if (file.error() != QFileDevice::NoError)
    throw std::runtime_error(QObject::tr("writing %1 failed: %2").arg(path, file.errorString()).toStdString());
  return written;
}

}  // namespace idem::ui
