#pragma once
// Cluster profiles in the user's settings (QSettings: ~/.config/Parallax/parallax.conf on Linux), one
// group per profile under "clusterProfiles/". Only the profile's fields are stored: never a secret.
#include "cluster/cluster_profile.hpp"

#include <QString>
#include <QStringList>

#include <optional>

class QSettings;

namespace parallax::remote {

class ProfileStore {
public:
    // Uses QSettings(organization, application) unless a settings file is given (tests, portable installs).
    explicit ProfileStore(QString settings_file = {});

    QStringList names() const;
    // Throws InputError when the stored profile does not validate (names the settings group and the key).
    std::optional<ClusterProfile> load(const QString& name) const;
    void save(const ClusterProfile& profile); // validates first; throws InputError
    void remove(const QString& name);
    QString location() const; // the settings file, for messages

private:
    std::unique_ptr<QSettings> settings() const;
    QString m_file;
};

inline constexpr const char* kProfilesGroup = "clusterProfiles";

} // namespace parallax::remote
