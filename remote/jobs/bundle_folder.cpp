#include "jobs/bundle_folder.hpp"

#include "spec/input_error.hpp"

#include <QDir>
#include <QFile>

namespace parallax::remote {

namespace {

QFileDevice::Permissions permissions_of(int mode)
{
    QFileDevice::Permissions p;
    const std::pair<int, QFileDevice::Permission> bits[]
        = { { 0400, QFileDevice::ReadOwner }, { 0200, QFileDevice::WriteOwner }, { 0100, QFileDevice::ExeOwner },
              { 040, QFileDevice::ReadGroup }, { 020, QFileDevice::WriteGroup }, { 010, QFileDevice::ExeGroup },
              { 04, QFileDevice::ReadOther }, { 02, QFileDevice::WriteOther }, { 01, QFileDevice::ExeOther } };
    for (const auto& [bit, permission] : bits)
        if (mode & bit)
            p |= permission;
    return p | QFileDevice::ReadOwner | QFileDevice::WriteOwner;
}

} // namespace

void write_bundle_folder(const JobBundle& bundle, const QString& dir)
{
    if (!QDir().mkpath(dir))
        throw InputError(dir.toStdString(), "", "cannot create the folder");
    for (const JobFile& f : bundle.files) {
        QFile out(dir + QLatin1Char('/') + QString::fromStdString(f.name));
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate))
            throw InputError(out.fileName().toStdString(), "", "cannot write the file");
        // Permissions before content: a secret is never readable by others, not even for a moment.
        if (!out.setPermissions(permissions_of(f.mode)))
            throw InputError(out.fileName().toStdString(), "", "cannot set the file's permissions");
        if (out.write(f.content.data(), static_cast<qint64>(f.content.size())) != static_cast<qint64>(f.content.size()))
            throw InputError(out.fileName().toStdString(), "", "cannot write the file");
    }
}

} // namespace parallax::remote
