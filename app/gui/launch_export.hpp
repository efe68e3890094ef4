#pragma once
// File → Export launch files: the plan as the framework's own launch files (core/io/export, the files
// `parallax-cli export` writes; a mixed-GPU plan with its per-group host lists), into a folder. What the
// framework cannot run is refused with the rule, as the command line refuses it.
#include "io/export/launch_config.hpp"

#include <QString>
#include <QStringList>

class QWidget;

namespace parallax::app {

// Writes `s`'s files for `format` into `folder` (created when missing), the written paths in `written`;
// false with the refusal or the I/O error in `error`. `source` names the plan in the files' headers.
bool write_launch_files(const Scenario& s, LaunchFormat format, const QString& folder, const QString& source,
    QString* error, QStringList* written = nullptr);

// Asks for the format and the folder, writes, and says what was written or why not.
void export_launch_dialog(QWidget* parent, const Scenario& s, const QString& source);

} // namespace parallax::app
