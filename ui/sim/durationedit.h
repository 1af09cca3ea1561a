#pragma once
// A line edit for simulator durations ("500ms", "3s", "30m", "24h"), optionally empty for
// "none" (no timeout, no cap). Invalid text is marked and duration() keeps the last valid value.
#include <QLineEdit>
#include <optional>

#include "core/sim/duration.h"

namespace idem::ui::sim {

class DurationEdit final : public QLineEdit {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(DurationEdit)

 public:
  /// allowNone: empty text (or "none") means no value.
  explicit DurationEdit(bool allowNone, QWidget* parent = nullptr);

  void setDuration(std::optional<idem::sim::Usec> d);
  /// The value as typed; for invalid text, the last valid one.
  [[nodiscard]] std::optional<idem::sim::Usec> duration() const { return m_value; }
  [[nodiscard]] idem::sim::Usec durationOr(idem::sim::Usec fallback) const { return m_value.value_or(fallback); }
  [[nodiscard]] bool isValid() const { return m_valid; }

 signals:
  void durationChanged();

 private:
  void parse();

  bool m_allowNone;
  bool m_valid = true;
  std::optional<idem::sim::Usec> m_value;
};

}  // namespace idem::ui::sim
