#pragma once
// The agent's case book: a local SQLite file (Qt SQL, QSQLITE) of the agent's own work — recent
// lookups, cases (a ticket reference, the keys looked at, notes, the exports made and where),
// and the simulator's saved scenarios. Nothing from the store goes in but what the agent acted
// on (the key and resource id it searched, the paths it exported to). The schema is versioned
// by PRAGMA user_version; each migration runs once, in order, in a transaction.
//
// It runs on the GUI thread: every write is one small statement (a row) on a local file in WAL
// mode, well under a millisecond, and the reads are bounded (LIMIT). A write never waits on
// the store's connection; nothing here touches the network.
#include <QDateTime>
#include <QObject>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

class QSettings;

namespace idem::ui {

struct KeyRef;

/// The settings key of the case book's file.
inline constexpr const char* kCaseBookSetting = "cases/database";

class CaseBook final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(CaseBook)

 public:
  /// The schema version this build migrates to.
  static constexpr int kSchemaVersion = 1;

  struct Lookup {
    qint64 id = 0;
    QDateTime at;
    QString searched;  ///< what the agent typed or pasted
    QString tenant, endpoint, key, resource;
    int generation = 0;
  };
  struct CaseKey {
    QString tenant, endpoint, key, resource;
    QDateTime addedAt;
  };
  struct Export {
    QString key;
    QString path;
    QDateTime at;
  };
  struct Case {
    qint64 id = 0;
    QString ticket;
    QString notes;
    QDateTime openedAt;
    QDateTime updatedAt;
    std::vector<CaseKey> keys;
    std::vector<Export> exports;
  };
  struct Scenario {
    QString name;
    QString json;
    QDateTime savedAt;
  };

  explicit CaseBook(QObject* parent = nullptr);
  ~CaseBook() override;

  /// ~/.local/share/Idem/idem-console/casebook.sqlite (the app data folder); pathFrom: the
  /// settings' cases/database, else beside an INI settings file, else the default.
  [[nodiscard]] static QString defaultPath();
  [[nodiscard]] static QString pathFrom(const QSettings& settings);

  /// Opens (creating) the file and migrates it; false with error() set when it cannot.
  bool open(const QString& path);
  [[nodiscard]] bool isOpen() const { return m_db.isOpen(); }
  [[nodiscard]] QString error() const { return m_error; }
  [[nodiscard]] QString path() const { return m_path; }
  [[nodiscard]] int schemaVersion() const;

  /// A search that landed on a key. It joins the current case only while that case has no key
  /// yet: the next customer's key, looked up with the last ticket's case still open, must not
  /// land in it (its letter would quote the other customer's ticket).
  void recordLookup(const QString& searched, const QString& tenant, const QString& endpoint, const QString& key,
                    int generation, const QString& resource);
  [[nodiscard]] std::vector<Lookup> recentLookups(int limit = 50) const;

  /// Opens a new case for ticket and makes it current; its id, or 0 on failure.
  qint64 openCase(const QString& ticket);
  void setCurrentCase(qint64 id);
  [[nodiscard]] qint64 currentCase() const { return m_current; }
  /// The current case's ticket; empty when no case is current.
  [[nodiscard]] QString currentTicket() const;
  /// The ticket a letter about this key quotes: the current case's when the key is in it, else
  /// empty (a letter never quotes a case the key is not part of).
  [[nodiscard]] QString ticketFor(const QString& tenant, const QString& endpoint, const QString& key) const;
  /// The case-joining rule, in one place: the key joins the current case when that case holds
  /// no key yet (the first key looked up or written for is what the case is about).
  void joinCurrentCaseIfFirst(const QString& tenant, const QString& endpoint, const QString& key,
                              const QString& resource);
  bool setNotes(qint64 caseId, const QString& notes);
  bool addKey(qint64 caseId, const QString& tenant, const QString& endpoint, const QString& key,
              const QString& resource);
  /// An export made for the current case (none current: the export is kept without a case).
  void recordExport(const QString& key, const QString& path);
  /// Cases whose ticket, notes, keys or resources contain text (all when empty), newest first.
  [[nodiscard]] std::vector<Case> findCases(const QString& text = {}, int limit = 200) const;
  [[nodiscard]] std::optional<Case> caseById(qint64 id) const;

  bool saveScenario(const QString& name, const QString& json);
  [[nodiscard]] std::vector<Scenario> scenarios() const;

 signals:
  /// Something was written: views reload.
  void changed();

 private:
  bool migrate();
  bool exec(const QString& sql, const QVariantList& values = {});
  void touch(qint64 caseId);

  QString m_connection;
  QSqlDatabase m_db;
  QString m_path;
  QString m_error;
  qint64 m_current = 0;
};

}  // namespace idem::ui
