#pragma once
// "Send as validation run": the current plan, a cluster profile and a framework become the job's files
// (make_job_bundle: the same generator as `parallax-cli run --out`), one editable tab per file, so every
// script can be read and changed before anything is sent. Changing the profile, framework or steps
// regenerates the files the user has not edited; an edited file keeps the user's text (its tab says so,
// Revert takes the generated one back). Send hands the request, with the edited files, to whoever listens;
// the dialog never touches the network.
#include "jobs/job_bundle.hpp"
#include "spec/scenario.hpp"

#include <QDialog>
#include <QMap>

#include <optional>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace parallax::views {

class DispatchDialog : public QDialog {
    Q_OBJECT
public:
    // settings_file: the ProfileStore's file (empty: the user's settings).
    DispatchDialog(
        const Scenario& plan, const QString& plan_label, const QString& settings_file, QWidget* parent = nullptr);

    void set_profile(const QString& name); // selects a stored profile and regenerates
    void set_framework(remote::JobFramework f);
    void set_steps(int steps); // 0: the framework's default
    void set_probe_shape(int layers, int microbatches); // 0: automatic
    void reload_profiles(); // after the profiles were edited

    QString profile_name() const;
    const QString& run_id() const { return m_run_id; }
    // The bundle as generated now (nullopt while the plan cannot run on the profile: error_text() says why).
    const std::optional<remote::JobBundle>& bundle() const { return m_bundle; }
    QString error_text() const;
    QStringList file_names() const;
    QPlainTextEdit* editor(const QString& file) const;
    bool edited(const QString& file) const;
    void revert(const QString& file);
    // What Send hands over: the plan, the profile, the options, the run id and every edited file.
    remote::RunRequest request() const;
    // The files as they stand (edits included) into `dir`, as `parallax-cli run --out` writes them: to keep,
    // diff or send later with `parallax-cli run --from DIR`. On failure returns false and says why.
    bool write_to(const QString& dir, QString* error = nullptr) const;

Q_SIGNALS:
    void send_requested();
    void edit_profiles_requested();

private:
    QFormLayout* make_form(); // profile, framework, run lengths
    QDialogButtonBox* make_buttons();
    void write_to_chosen_folder();
    void regenerate();
    void update_tab_titles();
    std::optional<remote::ClusterProfile> load_profile(QString* error) const;

    Scenario m_plan;
    QString m_label;
    QString m_settings_file;
    QString m_run_id;
    std::optional<remote::JobBundle> m_bundle;
    QMap<QString, QString> m_generated; // file -> generated text
    QMap<QString, QPlainTextEdit*> m_editors;
    bool m_filling = false;

    QComboBox* m_profile = nullptr;
    QComboBox* m_framework = nullptr;
    QSpinBox* m_steps = nullptr;
    QSpinBox* m_layers = nullptr;
    QSpinBox* m_micro = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_error = nullptr;
    QTabWidget* m_tabs = nullptr;
    QPushButton* m_send = nullptr;
    QPushButton* m_revert = nullptr;
};

} // namespace parallax::views
