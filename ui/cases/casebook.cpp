#include "ui/cases/casebook.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QUuid>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

// Each entry migrates version i to i + 1; never edit one that has shipped, add the next.
const char* const kMigrations[] = {
    R"(CREATE TABLE lookups (
         id INTEGER PRIMARY KEY, at TEXT NOT NULL, searched TEXT NOT NULL,
         tenant TEXT NOT NULL, endpoint TEXT NOT NULL, idem_key TEXT NOT NULL,
         generation INTEGER NOT NULL DEFAULT 0, resource TEXT NOT NULL DEFAULT '');
       CREATE INDEX lookups_at ON lookups (at DESC);
       CREATE TABLE cases (
         id INTEGER PRIMARY KEY, ticket TEXT NOT NULL, notes TEXT NOT NULL DEFAULT '',
         opened_at TEXT NOT NULL, updated_at TEXT NOT NULL);
       CREATE TABLE case_keys (
         case_id INTEGER NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
         tenant TEXT NOT NULL, endpoint TEXT NOT NULL, idem_key TEXT NOT NULL,
         resource TEXT NOT NULL DEFAULT '', added_at TEXT NOT NULL,
         PRIMARY KEY (case_id, tenant, endpoint, idem_key));
       CREATE TABLE exports (
         id INTEGER PRIMARY KEY, case_id INTEGER REFERENCES cases (id) ON DELETE SET NULL,
         idem_key TEXT NOT NULL, path TEXT NOT NULL, at TEXT NOT NULL);
       CREATE TABLE scenarios (name TEXT PRIMARY KEY, json TEXT NOT NULL, saved_at TEXT NOT NULL);)",
};
static_assert(std::size(kMigrations) == CaseBook::kSchemaVersion);

QString now() { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); }
QDateTime at(const QVariant& v) { return QDateTime::fromString(v.toString(), Qt::ISODateWithMs); }

}  // namespace

CaseBook::CaseBook(QObject* parent)
    : QObject(parent), m_connection(u"casebook-"_s % QUuid::createUuid().toString(QUuid::WithoutBraces)) {}

CaseBook::~CaseBook() {
  m_db.close();
  m_db = QSqlDatabase();
  QSqlDatabase::removeDatabase(m_connection);
}

QString CaseBook::defaultPath() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(u"casebook.sqlite"_s);
}

QString CaseBook::pathFrom(const QSettings& settings) {
  const QString path = settings.value(QLatin1String(kCaseBookSetting)).toString();
  if (!path.isEmpty()) return path;
  // Settings in a file of their own (--settings, the tests) keep the case book beside them.
  if (settings.format() == QSettings::IniFormat)
    return QFileInfo(settings.fileName()).dir().filePath(u"casebook.sqlite"_s);
  return defaultPath();
}

bool CaseBook::open(const QString& path) {
  m_path = path;
  if (!QDir().mkpath(QFileInfo(path).absolutePath())) {
    m_error = tr("cannot create the folder of %1").arg(path);
    return false;
  }
  m_db = QSqlDatabase::addDatabase(u"QSQLITE"_s, m_connection);
  m_db.setDatabaseName(path);
  if (!m_db.open()) {
    m_error = m_db.lastError().text();
    return false;
  }
  // WAL: a write appends to the log and returns; readers never block it.
  exec(u"PRAGMA journal_mode = WAL"_s);
  exec(u"PRAGMA synchronous = NORMAL"_s);
  exec(u"PRAGMA foreign_keys = ON"_s);
  if (!migrate()) {
    m_db.close();
    return false;
  }
  return true;
}

int CaseBook::schemaVersion() const {
  QSqlQuery q(m_db);
  return q.exec(u"PRAGMA user_version"_s) && q.next() ? q.value(0).toInt() : -1;
}

bool CaseBook::migrate() {
  const int from = schemaVersion();
  if (from > kSchemaVersion) {
    m_error = tr("the case book %1 is from a newer console (schema %2, this one knows %3)")
                  .arg(m_path).arg(from).arg(kSchemaVersion);
    return false;
  }
  for (int v = from; v < kSchemaVersion; ++v) {
    m_db.transaction();
    bool ok = true;
    for (const QString& statement : QString::fromUtf8(kMigrations[v]).split(u';', Qt::SkipEmptyParts))
      if (!statement.trimmed().isEmpty()) ok = ok && exec(statement);
    ok = ok && exec(u"PRAGMA user_version = %1"_s.arg(v + 1));  // PRAGMA takes no bound value
    if (!ok || !m_db.commit()) {
      m_db.rollback();
      m_error = tr("migrating the case book to schema %1 failed: %2").arg(v + 1).arg(m_error);
      return false;
    }
  }
  return true;
}

bool CaseBook::exec(const QString& sql, const QVariantList& values) {
  QSqlQuery q(m_db);
  if (!q.prepare(sql)) {
    m_error = q.lastError().text();
    return false;
  }
  for (const QVariant& v : values) q.addBindValue(v);
  if (!q.exec()) {
    m_error = q.lastError().text();
    return false;
  }
  return true;
}

void CaseBook::touch(qint64 caseId) { exec(u"UPDATE cases SET updated_at = ? WHERE id = ?"_s, {now(), caseId}); }

void CaseBook::recordLookup(const QString& searched, const QString& tenant, const QString& endpoint,
                            const QString& key, int generation, const QString& resource) {
  if (!isOpen()) return;
  exec(u"INSERT INTO lookups (at, searched, tenant, endpoint, idem_key, generation, resource) VALUES (?,?,?,?,?,?,?)"_s,
       {now(), searched, tenant, endpoint, key, generation, resource});
  joinCurrentCaseIfFirst(tenant, endpoint, key, resource);
  emit changed();
}

std::vector<CaseBook::Lookup> CaseBook::recentLookups(int limit) const {
  std::vector<Lookup> out;
  QSqlQuery q(m_db);
  q.prepare(u"SELECT id, at, searched, tenant, endpoint, idem_key, generation, resource FROM lookups "
            "ORDER BY id DESC LIMIT ?"_s);
  q.addBindValue(limit);
  if (!q.exec()) return out;
  while (q.next())
    out.push_back({q.value(0).toLongLong(), at(q.value(1)), q.value(2).toString(), q.value(3).toString(),
                   q.value(4).toString(), q.value(5).toString(), q.value(7).toString(), q.value(6).toInt()});
  return out;
}

qint64 CaseBook::openCase(const QString& ticket) {
  if (!isOpen() || ticket.trimmed().isEmpty()) return 0;
  QSqlQuery q(m_db);
  q.prepare(u"INSERT INTO cases (ticket, opened_at, updated_at) VALUES (?, ?, ?)"_s);
  const QString t = now();
  q.addBindValue(ticket.trimmed());
  q.addBindValue(t);
  q.addBindValue(t);
  if (!q.exec()) {
    m_error = q.lastError().text();
    return 0;
  }
  m_current = q.lastInsertId().toLongLong();
  emit changed();
  return m_current;
}

void CaseBook::setCurrentCase(qint64 id) { m_current = id; }

QString CaseBook::currentTicket() const {
  if (!m_current || !isOpen()) return {};
  QSqlQuery q(m_db);
  q.prepare(u"SELECT ticket FROM cases WHERE id = ?"_s);
  q.addBindValue(m_current);
  return q.exec() && q.next() ? q.value(0).toString() : QString();
}

QString CaseBook::ticketFor(const QString& tenant, const QString& endpoint, const QString& key) const {
  if (!m_current || !isOpen()) return {};
  QSqlQuery q(m_db);
  q.prepare(u"SELECT c.ticket FROM cases c JOIN case_keys k ON k.case_id = c.id "
            "WHERE c.id = ? AND k.tenant = ? AND k.endpoint = ? AND k.idem_key = ?"_s);
  for (const QVariant& v : {QVariant(m_current), QVariant(tenant), QVariant(endpoint), QVariant(key)}) q.addBindValue(v);
  return q.exec() && q.next() ? q.value(0).toString() : QString();
}

void CaseBook::joinCurrentCaseIfFirst(const QString& tenant, const QString& endpoint, const QString& key,
                                      const QString& resource) {
  if (!m_current || !isOpen()) return;
  QSqlQuery q(m_db);
  q.prepare(u"SELECT 1 FROM case_keys WHERE case_id = ? LIMIT 1"_s);
  q.addBindValue(m_current);
  if (q.exec() && !q.next()) addKey(m_current, tenant, endpoint, key, resource);
}

bool CaseBook::setNotes(qint64 caseId, const QString& notes) {
  const bool ok = exec(u"UPDATE cases SET notes = ?, updated_at = ? WHERE id = ?"_s, {notes, now(), caseId});
  if (ok) emit changed();
  return ok;
}

bool CaseBook::addKey(qint64 caseId, const QString& tenant, const QString& endpoint, const QString& key,
                      const QString& resource) {
  // A key looked at again keeps its first resource and time.
  const bool ok = exec(u"INSERT INTO case_keys (case_id, tenant, endpoint, idem_key, resource, added_at) "
                       "VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING"_s,
                       {caseId, tenant, endpoint, key, resource, now()});
  if (ok) touch(caseId);
  return ok;
}

void CaseBook::recordExport(const QString& key, const QString& path) {
  if (!isOpen()) return;
  exec(u"INSERT INTO exports (case_id, idem_key, path, at) VALUES (?,?,?,?)"_s,
       {m_current ? QVariant(m_current) : QVariant(QMetaType(QMetaType::LongLong)), key, path, now()});
  if (m_current) touch(m_current);
  emit changed();
}

std::optional<CaseBook::Case> CaseBook::caseById(qint64 id) const {
  QSqlQuery q(m_db);
  q.prepare(u"SELECT id, ticket, notes, opened_at, updated_at FROM cases WHERE id = ?"_s);
  q.addBindValue(id);
  if (!q.exec() || !q.next()) return std::nullopt;
  Case c{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(), at(q.value(3)), at(q.value(4)), {}, {}};
  QSqlQuery k(m_db);
  k.prepare(u"SELECT tenant, endpoint, idem_key, resource, added_at FROM case_keys WHERE case_id = ? ORDER BY added_at"_s);
  k.addBindValue(id);
  if (k.exec())
    while (k.next())
      c.keys.push_back({k.value(0).toString(), k.value(1).toString(), k.value(2).toString(), k.value(3).toString(),
                        at(k.value(4))});
  QSqlQuery e(m_db);
  e.prepare(u"SELECT idem_key, path, at FROM exports WHERE case_id = ? ORDER BY id"_s);
  e.addBindValue(id);
  if (e.exec())
    while (e.next()) c.exports.push_back({e.value(0).toString(), e.value(1).toString(), at(e.value(2))});
  return c;
}

std::vector<CaseBook::Case> CaseBook::findCases(const QString& text, int limit) const {
  std::vector<Case> out;
  QSqlQuery q(m_db);
  // instr() rather than LIKE: the agent's text matches literally, '%' and '_' included.
  q.prepare(u"SELECT id FROM cases c WHERE ? = '' OR instr(lower(ticket), lower(?)) > 0 "
            "OR instr(lower(notes), lower(?)) > 0 OR EXISTS (SELECT 1 FROM case_keys k WHERE k.case_id = c.id "
            "AND (instr(k.idem_key, ?) > 0 OR instr(k.resource, ?) > 0)) ORDER BY updated_at DESC, id DESC LIMIT ?"_s);
  // Bound as '' rather than NULL when empty: NULL = '' would match nothing.
  const QString needle = text.trimmed().isEmpty() ? u""_s : text.trimmed();
  for (int i = 0; i < 5; ++i) q.addBindValue(needle);
  q.addBindValue(limit);
  if (!q.exec()) {
    qWarning("case book: %s", qPrintable(q.lastError().text()));
    return out;
  }
  std::vector<qint64> ids;
  while (q.next()) ids.push_back(q.value(0).toLongLong());
  for (qint64 id : ids)
    if (auto c = caseById(id)) out.push_back(std::move(*c));
  return out;
}

bool CaseBook::saveScenario(const QString& name, const QString& json) {
  const bool ok = exec(u"INSERT INTO scenarios (name, json, saved_at) VALUES (?,?,?) "
                       "ON CONFLICT (name) DO UPDATE SET json = excluded.json, saved_at = excluded.saved_at"_s,
                       {name, json, now()});
  if (ok) emit changed();
  return ok;
}

std::vector<CaseBook::Scenario> CaseBook::scenarios() const {
  std::vector<Scenario> out;
  QSqlQuery q(u"SELECT name, json, saved_at FROM scenarios ORDER BY saved_at DESC"_s, m_db);
  while (q.next()) out.push_back({q.value(0).toString(), q.value(1).toString(), at(q.value(2))});
  return out;
}

}  // namespace idem::ui
