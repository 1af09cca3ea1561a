#include "ui/cases/casefolder.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

QString safeForFileName(const QString& text) {
  QString out;
  out.reserve(text.size());
  for (const QChar c : text)
    out += (c.unicode() < 0x20 || u"/\\:*?\"<>|"_s.contains(c)) ? u'_' : c;
  return out;
}

}  // namespace

QString defaultCaseFolder() {
  QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (documents.isEmpty()) documents = QDir::homePath();
  return QDir(documents).filePath(u"Idem cases"_s);
}

QString caseFolder(const QSettings& settings) {
  const QString folder = settings.value(QLatin1String(kCaseFolderSetting)).toString();
  return folder.isEmpty() ? defaultCaseFolder() : folder;
}

QString caseFileName(const QString& key, const QString& resource, const QString& suffix, const QString& extension) {
  QString name = u"idem-"_s;
  if (!resource.isEmpty() && resource != key) name += safeForFileName(resource) % u"-"_s;
  name += safeForFileName(key);
  if (!suffix.isEmpty()) name += u"-"_s % suffix;
  return name % u"."_s % extension;
}

QString freePath(const QString& folder, const QString& name) {
  const QDir dir(folder);
  const QFileInfo info(name);
  QString path = dir.filePath(name);
  for (int n = 2; QFileInfo::exists(path); ++n)
    path = dir.filePath(info.completeBaseName() % u"-"_s % QString::number(n) % u"."_s % info.suffix());
  return path;
}

}  // namespace idem::ui
