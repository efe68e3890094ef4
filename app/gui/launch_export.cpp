#include "gui/launch_export.hpp"

#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>

namespace parallax::app {

bool write_launch_files(const Scenario& s, LaunchFormat format, const QString& folder, const QString& source,
    QString* error, QStringList* written)
{
    auto fail = [&](const QString& why) {
        if (error)
            *error = why;
        return false;
    };
    LaunchConfig config;
    try {
        LaunchSettings settings;
        settings.run_label = QFileInfo(source).fileName().toStdString();
        config
            = export_launch_config(format, s, settings, source.isEmpty() ? "the planner's plan" : source.toStdString());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    if (!QDir().mkpath(folder))
        return fail(folder + QStringLiteral(": cannot create the folder"));
    for (const LaunchFile& f : config.files) {
        const QString path = QDir(folder).filePath(QString::fromStdString(f.name));
        try {
            write_text_file_atomically(path.toStdString(), f.content);
        } catch (const InputError& e) {
            return fail(QString::fromStdString(e.what()));
        }
        if (f.mode & 0111)
            QFile::setPermissions(path, QFile::permissions(path) | QFile::ExeOwner | QFile::ExeGroup | QFile::ExeOther);
        if (written)
            written->push_back(path);
    }
    return true;
}

void export_launch_dialog(QWidget* parent, const Scenario& s, const QString& source)
{
    const QStringList formats { QStringLiteral("megatron"), QStringLiteral("torchtitan"), QStringLiteral("nemo"),
        QStringLiteral("deepspeed") };
    bool ok = false;
    const QString name = QInputDialog::getItem(parent, QStringLiteral("Export launch files"),
        s.heterogeneous() ? QStringLiteral("Framework (a mixed-GPU plan: megatron or torchtitan):")
                          : QStringLiteral("Framework:"),
        formats, 0, false, &ok);
    if (!ok)
        return;
    const QString folder = QFileDialog::getExistingDirectory(parent, QStringLiteral("Folder for the launch files"));
    if (folder.isEmpty())
        return;
    QString error;
    QStringList written;
    if (!write_launch_files(s, *launch_format_from_string(name.toStdString()), folder, source, &error, &written))
        QMessageBox::warning(parent, QStringLiteral("Not exported"), error);
    else
        QMessageBox::information(
            parent, QStringLiteral("Exported"), QStringLiteral("Wrote %1").arg(written.join(QStringLiteral(", "))));
}

} // namespace parallax::app
