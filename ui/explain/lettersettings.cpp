#include "ui/explain/lettersettings.h"

#include <QDateTime>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

// A hand-edited INI reads an unquoted "Jane Doe, Support" as a list of two: the text it meant.
QString text(const QSettings& settings, const char* key, const QString& fallback) {
  const QVariant v = settings.value(QLatin1String(key), fallback);
  return v.typeId() == QMetaType::QStringList ? v.toStringList().join(u", "_s) : v.toString();
}

}  // namespace

LetterSettings LetterSettings::defaults() {
  LetterSettings s;
  s.sender = QObject::tr("Customer support");
  s.refundTiming = QObject::tr("Refunds usually reach your account within 5 to 10 business days, depending on your bank.");
  return s;
}

LetterSettings LetterSettings::load(const QSettings& settings) {
  LetterSettings s = defaults();
  s.sender = text(settings, kSenderKey, s.sender);
  s.signature = text(settings, kSignatureKey, QString());
  s.refundTiming = text(settings, kRefundTimingKey, s.refundTiming);
  s.addressee = settings.value(QLatin1String(kAddresseeKey)).toString() == u"consumer"_s ? explain::Addressee::Consumer
                                                                                         : explain::Addressee::Merchant;
  return s;
}

void LetterSettings::save(QSettings& settings) const {
  settings.setValue(QLatin1String(kSenderKey), sender);
  settings.setValue(QLatin1String(kSignatureKey), signature);
  settings.setValue(QLatin1String(kRefundTimingKey), refundTiming);
  settings.setValue(QLatin1String(kAddresseeKey),
                    addressee == explain::Addressee::Consumer ? u"consumer"_s : u"merchant"_s);
}

explain::LetterOptions LetterSettings::options(const QString& ticket) const {
  explain::LetterOptions o;
  o.to = addressee;
  o.sender = sender.trimmed().toStdString();
  o.signature = signature.trimmed().toStdString();
  o.ticket = ticket.trimmed().toStdString();
  o.refundTiming = refundTiming.trimmed().toStdString();
  o.date = explain::Instant{QDateTime::currentMSecsSinceEpoch() * 1000};
  return o;
}

}  // namespace idem::ui
