#pragma once
// The agent's letter settings (the profile menu's "Letters to customers…"): sender, signature,
// refund timing, and whom the letters address.
#include <QDialog>

#include "ui/explain/lettersettings.h"

class QComboBox;
class QLineEdit;
class QPlainTextEdit;

namespace idem::ui {

class LetterSettingsDialog final : public QDialog {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(LetterSettingsDialog)

 public:
  explicit LetterSettingsDialog(const LetterSettings& settings, QWidget* parent = nullptr);
  [[nodiscard]] LetterSettings settings() const;

 private:
  QLineEdit* m_sender;
  QPlainTextEdit* m_signature;
  QLineEdit* m_refundTiming;
  QComboBox* m_addressee;
};

}  // namespace idem::ui
