#pragma once
// Editors for every field of the scenario format outside the strategy: the model (with MLA and MoE),
// the cluster (GPU and both fabric levels, presets or inline) and the training settings (plus the
// search section). Each field shows its unit; a value the format rejects is not applied and the
// reason appears under the field (the same message the file loader gives, from core's parsers);
// rules of the plan that a field breaks are shown under it too. Choosing a preset fills the fields
// and keeps the preset's name for saving; editing a field makes that part inline.
#include "spec/scenario.hpp"

#include <QVariant>
#include <QWidget>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

class QLabel;

namespace parallax::views {

struct FormField {
    enum class Kind : unsigned char { integer, number, boolean, choice, text };
    QString key; // "model.heads": matches the key of core's error messages
    QString label;
    QString unit;
    QString section; // group title; empty = the top group
    Kind kind = Kind::integer;
    double min = 0;
    double max = 1e9;
    int decimals = 0;
    QString special; // shown for the minimum value ("auto", "none")
    std::function<QStringList(const Scenario&)> choices;
    std::function<QVariant(const Scenario&)> get;
    std::function<void(Scenario&, const QVariant&)> set;
    std::function<bool(const Scenario&)> enabled;
};

// (key, message) of the first problem of a candidate scenario, or nothing.
using FormValidator = std::function<std::optional<std::pair<QString, QString>>(const Scenario&)>;

class ScenarioForm : public QWidget {
    Q_OBJECT
public:
    ScenarioForm(
        std::vector<FormField> fields, FormValidator validate, QStringList rule_prefixes, QWidget* parent = nullptr);
    void set_scenario(const Scenario& s);
    QWidget* field_widget(const QString& key) const;
    QString field_message(const QString& key) const; // the inline message under the field, if shown
    QStringList keys() const;

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);

private:
    struct Row {
        FormField field;
        QWidget* editor = nullptr;
        QLabel* message = nullptr;
    };
    void commit(int index);
    QVariant value_of(const Row& r) const;
    void show_value(Row& r);
    void show_message(const QString& key, const QString& text, bool hard);
    void clear_messages();

    std::vector<Row> m_rows;
    FormValidator m_validate;
    QStringList m_rule_prefixes;
    std::optional<Scenario> m_scenario;
    bool m_updating = false;
};

ScenarioForm* make_model_editor(QWidget* parent = nullptr);
ScenarioForm* make_cluster_editor(QWidget* parent = nullptr);
ScenarioForm* make_training_editor(QWidget* parent = nullptr);

} // namespace parallax::views
