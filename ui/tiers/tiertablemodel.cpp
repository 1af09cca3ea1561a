#include "ui/tiers/tiertablemodel.h"

#include <QColor>
#include <QFont>
#include <QLocale>

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
using tiers::Millis;
namespace {

QString dur(Millis d) { return formatDuration(d.count()); }
QString dur(double ms) { return formatDuration(static_cast<qint64>(ms)); }

// What a request on the tier's routes meets: whether keys are enforced at all (a tier in
// observe answers nothing from its keys, so its TTL verdict protects no one yet), and what a
// new key that repeats another key's request gets.
QString enforcement(const policy::Tier& t) {
  QString out;
  switch (t.rollout) {
    case policy::Rollout::Observe: out = TierTableModel::tr("observe only"); break;
    case policy::Rollout::WhenPresent: out = TierTableModel::tr("key when sent"); break;
    case policy::Rollout::Required: out = TierTableModel::tr("key required"); break;
  }
  if (t.crossKey.on())
    out += u" · "_s % TierTableModel::tr("new-key repeats: %1 %2")
                          .arg(QString::fromUtf8(policy::crossKeyModeName(t.crossKey.mode)), dur(t.crossKey.window));
  return out;
}

QString enforcementExplained(const policy::Tier& t) {
  QStringList lines;
  switch (t.rollout) {
    case policy::Rollout::Observe:
      lines << TierTableModel::tr("Observe: every request reaches the service; Idem only records what it would have "
                                  "answered. The TTL protects no one until the tier is required.");
      break;
    case policy::Rollout::WhenPresent:
      lines << TierTableModel::tr("A key is enforced when the client sends one; a request without a key passes.");
      break;
    case policy::Rollout::Required: lines << TierTableModel::tr("A request without a key is refused (400)."); break;
  }
  const QString window = dur(t.crossKey.window);
  switch (t.crossKey.mode) {
    case policy::CrossKeyMode::Off: break;
    case policy::CrossKeyMode::Observe:
      lines << TierTableModel::tr("The same request under a new key within %1 runs, and is flagged as a suspected "
                                  "duplicate.").arg(window);
      break;
    case policy::CrossKeyMode::Hold:
      lines << TierTableModel::tr("The same request under a new key within %1 is held (409) until the client "
                                  "confirms it is meant.").arg(window);
      break;
    case policy::CrossKeyMode::Reject:
      lines << TierTableModel::tr("The same request under a new key within %1 is refused (409).").arg(window);
      break;
  }
  return lines.join(u'\n');
}

}  // namespace

TierTableModel::TierTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TierTableModel::setReport(const tiers::Report& report) {
  beginResetModel();
  m_tiers = report.tiers;
  endResetModel();
}

void TierTableModel::clear() {
  beginResetModel();
  m_tiers.clear();
  endResetModel();
}

const tiers::TierReport* TierTableModel::tierAt(int row) const {
  return row >= 0 && row < static_cast<int>(m_tiers.size()) ? &m_tiers[static_cast<std::size_t>(row)] : nullptr;
}

int TierTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_tiers.size());
}

int TierTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags TierTableModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

QVariant TierTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case ColTier: return tr("Tier");
    case ColRoutes: return tr("Routes");
    case ColTtl: return tr("TTL");
    case ColLease: return tr("Lease");
    case ColOnExpired: return tr("On expiry");
    case ColEnforcement: return tr("Enforcement");
    case ColArchive: return tr("Archive kept");
    case ColWindows: return tr("Reference windows");
    case ColRetries: return tr("Retries");
    case ColHorizon: return tr("Observed retry horizon");
    case ColRecommended: return tr("Recommended TTL");
    case ColVerdict: return tr("Verdict");
    default: return {};
  }
}

QVariant TierTableModel::display(const tiers::TierReport& t, int column) const {
  switch (column) {
    case ColTier: return QString::fromStdString(t.tier.name);
    case ColRoutes: {
      QStringList routes;
      for (const auto& r : t.tier.routes) routes << QString::fromStdString(r);
      return routes.join(u", "_s);
    }
    case ColTtl: return dur(t.tier.ttl);
    case ColLease: return dur(t.tier.lease);
    case ColOnExpired:
      return t.tier.onExpired == policy::OnExpired::Execute ? tr("execute again") : tr("reject (422)");
    case ColEnforcement: return enforcement(t.tier);
    case ColArchive:
      return t.tier.bodyRetention ? tr("%1 (bodies %2)").arg(dur(t.tier.archiveRetention), dur(*t.tier.bodyRetention))
                                  : dur(t.tier.archiveRetention);
    case ColWindows: {
      QStringList windows;
      for (const auto& [name, w] : t.tier.referenceWindows)
        windows << QString::fromStdString(name) % u" "_s % dur(w);
      return windows.isEmpty() ? tr("—") : windows.join(u", "_s);
    }
    case ColRetries:
      return tr("%1 after %2 ops").arg(QLocale().toString(t.retries.retries), QLocale().toString(t.retries.operations));
    case ColHorizon:
      if (!t.retries.offsets) return tr("no retries observed");
      return tr("p99.9 %1 · max %2").arg(dur(t.retries.offsets->p999), dur(t.retries.offsets->max));
    case ColRecommended: return t.recommendation.made ? dur(t.recommendation.ttl) : tr("not enough retries");
    case ColVerdict:
      if (!t.flagged()) return tr("OK");
      return t.flags.size() == 1 ? tr("⚠ too short (1 reason)") : tr("⚠ too short (%1 reasons)").arg(t.flags.size());
    default: return {};
  }
}

QVariant TierTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const auto& t = m_tiers[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(t, index.column());
    case NameRole: return QString::fromStdString(t.tier.name);
    case FlaggedRole: return t.flagged();
    case Qt::ToolTipRole: {
      if (index.column() == ColRecommended) return QString::fromStdString(t.recommendation.because);
      if (index.column() == ColEnforcement) return enforcementExplained(t.tier);
      if (!t.flagged()) return {};
      QStringList lines;
      for (const auto& f : t.flags) lines << u"• "_s % QString::fromStdString(f);
      return lines.join(u'\n');
    }
    case Qt::ForegroundRole:
      if (index.column() == ColEnforcement && t.tier.observed()) return QColor(0x8a, 0x6d, 0x00);
      if (index.column() == ColVerdict && t.flagged())
        return outcomeStyle(t.tier.onExpired == policy::OnExpired::Execute ? trace::Outcome::ExecutedAfterExpiry
                                                                           : trace::Outcome::RejectedExpired)
            .color;
      return {};
    case Qt::FontRole:
      if (index.column() == ColTier || (index.column() == ColVerdict && t.flagged())) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    default: return {};
  }
}

}  // namespace idem::ui
