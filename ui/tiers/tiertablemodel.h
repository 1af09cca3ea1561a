#pragma once
// The tier table: each tier of the policy in force with its routes, TTL, lease, behaviour on
// expiry, archive retention, reference windows, the observed retry horizon, the verdict, and how
// far the tier is enforced (its rollout and its look for duplicates across keys).
#include <QAbstractTableModel>

#include "core/tiers/tiers.h"

namespace idem::ui {

class TierTableModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TierTableModel)

 public:
  enum Column {  // what a product owner reads first comes first
    ColTier,
    ColVerdict,
    ColEnforcement,
    ColTtl,
    ColHorizon,
    ColRecommended,
    ColWindows,
    ColRetries,
    ColOnExpired,
    ColLease,
    ColArchive,
    ColRoutes,
    ColumnCount
  };
  /// Qt::UserRole + 1: the tier's name; + 2: whether it is flagged.
  static constexpr int NameRole = Qt::UserRole + 1;
  static constexpr int FlaggedRole = Qt::UserRole + 2;

  explicit TierTableModel(QObject* parent = nullptr);

  void setReport(const tiers::Report& report);
  void clear();
  [[nodiscard]] const tiers::TierReport* tierAt(int row) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

 private:
  [[nodiscard]] QVariant display(const tiers::TierReport& t, int column) const;
  std::vector<tiers::TierReport> m_tiers;
};

}  // namespace idem::ui
