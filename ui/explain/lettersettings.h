#pragma once
// What the agent's letters to customers say about their sender: the company's name, the
// signature, how long a refund takes, and whom the letters address (a platform's merchant or a
// consumer). Kept in QSettings under letter/… (no secrets); read each time a letter is made.
#include <QString>

#include "core/explain/letter.h"

class QSettings;

namespace idem::ui {

struct LetterSettings {
  static constexpr const char* kSenderKey = "letter/sender";
  static constexpr const char* kSignatureKey = "letter/signature";
  static constexpr const char* kRefundTimingKey = "letter/refundTiming";
  static constexpr const char* kAddresseeKey = "letter/addressee";  ///< "merchant" | "consumer"

  QString sender;
  QString signature;  ///< lines under "Kind regards,"; empty: the sender
  QString refundTiming;
  explain::Addressee addressee = explain::Addressee::Merchant;

  /// A sender "Customer support", a 5–10 business days refund timing, a merchant reader.
  [[nodiscard]] static LetterSettings defaults();
  /// The settings' values; the default for each one absent (an unknown addressee reads "merchant").
  [[nodiscard]] static LetterSettings load(const QSettings& settings);
  void save(QSettings& settings) const;
  /// Core's options for a letter about the case's ticket, dated now.
  [[nodiscard]] explain::LetterOptions options(const QString& ticket) const;
};

}  // namespace idem::ui
