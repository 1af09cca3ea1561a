#include "ui/sim/savedscenario.h"

#include <QObject>

#include "core/sim/config_parse.h"

using namespace Qt::StringLiterals;

namespace idem::ui::sim {

namespace core = idem::sim;

QString scenarioToJson(const SavedScenario& s) {
  nlohmann::ordered_json doc;
  doc["version"] = 1;
  doc["config"] = core::configToJson(s.a);
  doc["policy_b"] = core::policyToJson(s.b);
  doc["compare"] = s.compare;
  return QString::fromStdString(doc.dump(2));
}

std::optional<SavedScenario> scenarioFromJson(const QString& json, QString* error) {
  auto fail = [error](const QString& why) -> std::optional<SavedScenario> {
    if (error) *error = why;
    return std::nullopt;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json.toStdString());
  } catch (const nlohmann::json::exception& e) {
    return fail(QObject::tr("not JSON: %1").arg(QString::fromUtf8(e.what())));
  }
  if (!doc.is_object() || doc.value("version", 0) != 1 || !doc.contains("config") || !doc.contains("policy_b"))
    return fail(QObject::tr("not a saved scenario of this console (version 1 with config and policy_b)"));
  try {
    SavedScenario s;
    s.a = core::parseConfig(doc.at("config"));
    // Policy B runs against the same clients, server and store: read it in A's config.
    nlohmann::json withB = doc.at("config");
    withB["policy"] = doc.at("policy_b");
    s.b = core::parseConfig(withB).policy;
    s.compare = doc.value("compare", true);
    return s;
  } catch (const core::ConfigError& e) {
    return fail(QString::fromUtf8(e.what()));
  } catch (const nlohmann::json::exception& e) {
    return fail(QString::fromUtf8(e.what()));
  }
}

}  // namespace idem::ui::sim
