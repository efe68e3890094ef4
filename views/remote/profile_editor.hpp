#pragma once
// Cluster profiles, edited: the stored profiles on the left (New, Duplicate, Remove), every field of the
// profile format on the right. Save checks the form with the loader the CLI uses (profile_from_json: strict,
// every rule of validate_profile), so a bad value gets the same message, naming the key; the field is
// marked and focused and nothing typed is lost. Edits to a profile survive switching to another one (each
// unsaved profile keeps its draft, marked with *) until saved or discarded. Profiles live in the settings
// (ProfileStore); there is no field for a secret.
#include "cluster/cluster_profile.hpp"

#include <QDialog>
#include <QMap>

#include <nlohmann/json.hpp>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QTabWidget;
class QVBoxLayout;

namespace parallax::views {

class ProfileEditorDialog : public QDialog {
    Q_OBJECT
public:
    // settings_file: the ProfileStore's file (empty: the user's settings).
    explicit ProfileEditorDialog(const QString& settings_file, QWidget* parent = nullptr);

    QStringList stored_names() const;
    // Selects a stored profile (or a draft) by name; false when there is none.
    bool select(const QString& name);
    void new_profile();
    // Checks and stores the form; on failure shows the error (error_text()) and keeps the form as typed.
    bool save();
    bool remove_current(); // asks when interactive
    QString error_text() const;
    QString error_key() const { return m_error_key; } // the key the last error named ("port", "env.X", ...)
    // The field for a profile key ("port", "modules", "env"...), for tests and to focus errors.
    QWidget* field(const QString& key) const;
    // The form as profile JSON (numbers where the text is a number, strings otherwise: the loader says what
    // is wrong). Throws InputError for an env line that is not KEY=VALUE.
    nlohmann::json form_json() const;
    void set_form(const remote::ClusterProfile& p);
    bool has_draft(const QString& name) const { return m_drafts.contains(name); }
    // Ask before discarding drafts when closed (off in tests).
    void set_interactive(bool on) { m_interactive = on; }

Q_SIGNALS:
    void profiles_changed(QStringList names);

protected:
    void done(int r) override;

private:
    void build();
    QVBoxLayout* build_profile_list();
    void build_connection_page();
    void build_launch_page();
    void build_paths_page();
    void build_monitoring_page();
    void build_footer(QVBoxLayout* right, QVBoxLayout* outer);
    void duplicate_current();
    QLineEdit* add_line(QFormLayout* f, const char* key, const QString& label, const QString& tip);
    void add_check(QFormLayout* f, const char* key, const QString& label, const QString& tip);
    void add_combo(QFormLayout* f, const char* key, const QString& label, const QStringList& items, bool editable,
        const QString& tip);
    void add_text(QFormLayout* f, const char* key, const QString& label, const QString& tip);
    QFormLayout* add_page(const QString& title);
    void reload_list(const QString& select_name);
    void show_error(const QString& key, const QString& message);
    void clear_error();
    void remember_draft();
    void load_selected();
    QString current_name() const;

    QString m_settings_file;
    bool m_interactive = true;
    bool m_loading = false;
    QString m_loaded_name; // the stored profile shown (empty: a new one)
    QMap<QString, nlohmann::json> m_drafts; // unsaved forms by the name they were loaded as
    QString m_error_key;

    QListWidget* m_list = nullptr;
    QTabWidget* m_tabs = nullptr;
    QLabel* m_error = nullptr;
    QMap<QString, QLineEdit*> m_lines;
    QMap<QString, QCheckBox*> m_checks;
    QMap<QString, QComboBox*> m_combos;
    QMap<QString, QPlainTextEdit*> m_texts;
};

} // namespace parallax::views
