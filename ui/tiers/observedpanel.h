#pragma once
// The rollout panel of the Tiers view: for each route of a tier in rollout `observe`, how many
// requests enforcement would have answered itself (400, replay, 409, 422, other) over the
// view's period, and the requests behind the count picked (docs/console.md, "Rollout"). Shows
// what its workspace read on the worker thread; asks for the requests through a signal.
#include <QWidget>
#include <vector>

#include "core/tiers/observed.h"

class QLabel;
class QStandardItemModel;
class QTableView;

namespace idem::ui {

class ObservedPanel final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ObservedPanel)

 public:
  explicit ObservedPanel(QWidget* parent = nullptr);

  /// The counts per route (replaces what is shown; the request list empties).
  void setRoutes(std::vector<tiers::ObservedRoute> routes);
  /// The requests behind the count asked for by requestsWanted().
  void setRequests(const QString& route, tiers::Would would, const std::vector<tiers::ObservedRequest>& requests);
  /// Picks the count of `route` in column `would`, as a click does.
  void pick(const QString& route, tiers::Would would);
  /// Picks the largest count shown (nothing when every count is 0).
  void pickLargest();

  [[nodiscard]] QStandardItemModel* routes() const { return m_routesModel; }
  [[nodiscard]] QStandardItemModel* requests() const { return m_requestsModel; }
  /// The count shown for a route and column; -1 when the route is not listed.
  [[nodiscard]] long long countShown(const QString& route, tiers::Would would) const;

  static constexpr int kFirstCountColumn = 2;  // Route, Tier, then one column per Would

 signals:
  void requestsWanted(const QString& route, tiers::Would would);
  /// A request with a key was double-clicked: open it in the key browser.
  void keyOpened(const QString& key);

 private:
  void cellClicked(const QModelIndex& index);

  QLabel* m_summary;
  QStandardItemModel* m_routesModel;
  QTableView* m_routesView;
  QLabel* m_requestsTitle;
  QStandardItemModel* m_requestsModel;
  QTableView* m_requestsView;
};

}  // namespace idem::ui
