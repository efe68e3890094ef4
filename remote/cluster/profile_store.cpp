#include "cluster/profile_store.hpp"

#include "io/input_limits.hpp"
#include "spec/input_error.hpp"

#include <QFile>
#include <QSettings>

#include <memory>

namespace parallax::remote {

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

ProfileStore::ProfileStore(QString settings_file)
    : m_file(std::move(settings_file))
{
}

std::unique_ptr<QSettings> ProfileStore::settings() const
{
    if (!m_file.isEmpty())
        return std::make_unique<QSettings>(m_file, QSettings::IniFormat);
    return std::make_unique<QSettings>(QStringLiteral("Parallax"), QStringLiteral("parallax"));
}

QString ProfileStore::location() const
{
    return settings()->fileName();
}

QStringList ProfileStore::names() const
{
    auto s = settings();
    s->beginGroup(QLatin1String(kProfilesGroup));
    QStringList out = s->childGroups();
    out.sort();
    return out;
}

// Each JSON field becomes one typed settings key; lists stay lists and env becomes a sub-group, so the
// settings file stays readable and editable by hand.
void ProfileStore::save(const ClusterProfile& profile)
{
    validate_profile(profile, "cluster profile");
    auto s = settings();
    s->beginGroup(QLatin1String(kProfilesGroup));
    s->remove(q(profile.name));
    s->beginGroup(q(profile.name));
    const nlohmann::json j = profile_to_json(profile);
    for (const auto& [key, value] : j.items()) {
        const QString k = q(key);
        if (key == "env") {
            s->beginGroup(k);
            for (const auto& [ek, ev] : value.items())
                s->setValue(q(ek), q(ev.get<std::string>()));
            s->endGroup();
        } else if (value.is_array()) {
            QStringList list;
            for (const auto& v : value)
                list << q(v.get<std::string>());
            s->setValue(k, list);
        } else if (value.is_boolean()) {
            s->setValue(k, value.get<bool>());
        } else if (value.is_number_integer() || value.is_number_unsigned()) {
            s->setValue(k, value.get<qlonglong>());
        } else if (value.is_number()) {
            s->setValue(k, value.get<double>());
        } else {
            s->setValue(k, q(value.get<std::string>()));
        }
    }
    s->endGroup();
    s->endGroup();
    s->sync();
    if (s->status() != QSettings::NoError)
        throw InputError(s->fileName().toStdString(), profile.name, "cannot write the settings file");
    // env values may be tokens: the settings file that holds them is the owner's alone.
    if (!profile.env.empty()
        && !QFile::setPermissions(s->fileName(),
            QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser))
        throw InputError(s->fileName().toStdString(), profile.name, "cannot make the settings file owner-only");
}

std::optional<ClusterProfile> ProfileStore::load(const QString& name) const
{
    auto s = settings();
    s->beginGroup(QLatin1String(kProfilesGroup));
    if (!s->childGroups().contains(name))
        return std::nullopt;
    s->beginGroup(name);
    // Types follow the JSON form of a default profile, so a hand-edited "port=22" string reads as a number.
    const nlohmann::json shape = profile_to_json(ClusterProfile {});
    nlohmann::json j = nlohmann::json::object();
    const std::string where
        = s->fileName().toStdString() + " [" + std::string(kProfilesGroup) + "/" + name.toStdString() + "]";
    for (const QString& key : s->childKeys()) {
        const std::string k = key.toStdString();
        const QVariant v = s->value(key);
        const auto it = shape.find(k);
        if (it == shape.end()) {
            j[k] = v.toString().toStdString(); // profile_from_json names the unknown key
        } else if (it->is_array()) {
            nlohmann::json list = nlohmann::json::array();
            // QSettings returns a one-element list as a plain string.
            const QStringList items = v.typeId() == QMetaType::QStringList ? v.toStringList()
                : v.toString().isEmpty()                                   ? QStringList {}
                                                                           : QStringList { v.toString() };
            for (const QString& item : items)
                list.push_back(item.toStdString());
            j[k] = list;
        } else if (it->is_boolean()) {
            const QString t = v.toString().toLower();
            if (t != QLatin1String("true") && t != QLatin1String("false"))
                throw InputError(
                    where, k, "must be true or false, found '" + quoted_for_message(v.toString().toStdString()) + "'");
            j[k] = t == QLatin1String("true");
        } else if (it->is_number_integer() || it->is_number_unsigned()) {
            bool ok = false;
            const qlonglong n = v.toString().toLongLong(&ok);
            if (!ok)
                throw InputError(
                    where, k, "must be an integer, found '" + quoted_for_message(v.toString().toStdString()) + "'");
            j[k] = n;
        } else if (it->is_number()) {
            bool ok = false;
            const double n = v.toString().toDouble(&ok);
            if (!ok)
                throw InputError(
                    where, k, "must be a number, found '" + quoted_for_message(v.toString().toStdString()) + "'");
            j[k] = n;
        } else {
            j[k] = v.toString().toStdString();
        }
    }
    s->beginGroup(QStringLiteral("env"));
    nlohmann::json env = nlohmann::json::object();
    for (const QString& key : s->childKeys())
        env[key.toStdString()] = s->value(key).toString().toStdString();
    s->endGroup();
    if (!env.empty())
        j["env"] = env;
    return profile_from_json(j, where);
}

void ProfileStore::remove(const QString& name)
{
    auto s = settings();
    s->beginGroup(QLatin1String(kProfilesGroup));
    s->remove(name);
    s->endGroup();
    s->sync();
}

} // namespace parallax::remote
