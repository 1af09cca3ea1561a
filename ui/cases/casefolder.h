#pragma once
// Where the agent's exports go without a dialog: the case folder (a setting), and file names
// that carry the whole key or resource id, so the file is found again by what the customer quoted.
#include <QString>

class QSettings;

namespace idem::ui {

/// The settings key of the case folder.
inline constexpr const char* kCaseFolderSetting = "cases/folder";

/// ~/Documents/Idem cases (the XDG documents folder when one is set), else ~/Idem cases.
[[nodiscard]] QString defaultCaseFolder();
/// The folder in settings, or the default.
[[nodiscard]] QString caseFolder(const QSettings& settings);

/// "idem-<resource>-<key>.pdf" (or without the resource): the whole id and key, with only the
/// characters a file name cannot hold ('/', '\\', ':', control characters…) replaced by '_'.
[[nodiscard]] QString caseFileName(const QString& key, const QString& resource, const QString& suffix,
                                   const QString& extension);
/// folder/name, or folder/name-2.ext, -3… when taken: an export never overwrites an earlier one.
[[nodiscard]] QString freePath(const QString& folder, const QString& name);

}  // namespace idem::ui
