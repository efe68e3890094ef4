#pragma once
// The strategy panel: a snapping handle per degree (tp, pp, dp, cp, ep, vpp, micro_batch) with lock
// and "absorbs the change" buttons, the toggles (sequence parallel, recompute, ZeRO, schedule,
// offload, precision, framework) and the less common knobs. Options that break a rule are disabled
// and say which rule; what the plan breaks right now is listed under the handles. Every user change
// is a request (edit_requested) the window may turn into an undo step; the panel computes nothing
// but asks core's rules which values are reachable.
#include "spec/scenario.hpp"
#include "spec/strategy_rules.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QStringList>
#include <QWidget>

#include <optional>

#include <array>
#include <vector>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QGroupBox;
class QLabel;
class QSpinBox;
class QToolButton;
class QVBoxLayout;
class QButtonGroup;

namespace parallax::views {

class DegreeSlider;

class StrategyPanel : public QWidget {
    Q_OBJECT
public:
    explicit StrategyPanel(QWidget* parent = nullptr);

    // The plan as it is now (synchronously after every edit) and the absorber/lock choices.
    void set_scenario(const Scenario& s, const PlanEvaluationOptions& options);
    // The "why it moved" sentence of the latest change, shown in the learn tooltips.
    void set_why(const QString& why);

    DegreeSlider* slider(Degree d) const { return m_rows[static_cast<int>(d)].slider; }
    QToolButton* lock_button(Degree d) const { return m_rows[static_cast<int>(d)].lock; }
    QToolButton* absorber_button(Degree d) const { return m_rows[static_cast<int>(d)].absorb; }
    QComboBox* schedule_box() const { return m_schedule; }
    QComboBox* recompute_box() const { return m_recompute; }
    // Megatron's recomputed submodules under selective recomputation: a menu of checkable modules.
    QToolButton* recompute_modules_button() const { return m_recompute_modules; }
    QComboBox* zero_box() const { return m_zero; }
    QCheckBox* sequence_parallel_box() const { return m_sp; }
    QCheckBox* offload_activations_box() const { return m_offload_activations; }
    QCheckBox* offload_params_box() const { return m_offload_params; }
    QCheckBox* ep_tile_overlap_box() const { return m_ep_tile_overlap; }
    QLabel* violations_label() const { return m_violations; }

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);
    void options_changed(const parallax::PlanEvaluationOptions& options);

protected:
    void changeEvent(QEvent* e) override;

private:
    struct Row {
        QLabel* name = nullptr;
        DegreeSlider* slider = nullptr;
        QLabel* value = nullptr;
        QToolButton* lock = nullptr;
        QToolButton* absorb = nullptr;
    };
    void build();
    void build_degree_rows(QVBoxLayout* outer);
    void build_lock_buttons(Degree d, QGridLayout* grid, int row);
    void build_common_settings(QVBoxLayout* outer);
    void build_more_settings(QVBoxLayout* outer);
    void connect_common_settings();
    void connect_toggle(QCheckBox* box, bool Strategy::*field, const QString& name);
    void connect_more_settings();
    void refresh();
    void refresh_degree_row(Degree d, const PlanInputs& in, const QStringList& broken_keys, bool dark);
    void disable_degree_row(Degree d);
    void show_violations(const std::vector<Rule>& broken, const PlanInputs& in, bool dark);
    void refresh_settings(const PlanInputs& in, const std::vector<Rule>& broken);
    void refresh_recompute_modules(const PlanInputs& in);
    void refresh_offload_settings(const PlanInputs& in);
    void gate_toggle(QCheckBox* box, bool Strategy::*field, const char* key, const QString& why_not);
    void refresh_tooltips();
    void refresh_icons();
    void degree_chosen(Degree d, int value, int drag);
    // The shown plan's strategy and training; defaults before a scenario is shown (edits are then
    // ignored by request()).
    Strategy strategy() const { return m_scenario ? m_scenario->strategy : Strategy {}; }
    TrainingSpec training() const { return m_scenario ? m_scenario->training : TrainingSpec {}; }
    void request(const Strategy& s, const QString& what);
    void request_training(const TrainingSpec& t, const QString& what);

    std::optional<Scenario> m_scenario;
    PlanEvaluationOptions m_options;
    QString m_why;
    std::array<Row, kDegreeCount> m_rows {};
    QButtonGroup* m_absorb_group = nullptr;
    QLabel* m_gpu_line = nullptr;
    QLabel* m_violations = nullptr;
    QCheckBox* m_sp = nullptr;
    QComboBox* m_recompute = nullptr;
    QToolButton* m_recompute_modules = nullptr;
    QComboBox* m_zero = nullptr;
    QComboBox* m_schedule = nullptr;
    QCheckBox* m_offload = nullptr;
    QCheckBox* m_offload_activations = nullptr;
    QCheckBox* m_offload_params = nullptr;
    QCheckBox* m_ep_tile_overlap = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_framework = nullptr;
    QToolButton* m_more_button = nullptr;
    QGroupBox* m_more = nullptr;
    QComboBox* m_optimizer = nullptr;
    QComboBox* m_cp_kind = nullptr;
    QCheckBox* m_tp_overlap = nullptr;
    QCheckBox* m_grad_overlap = nullptr;
    QCheckBox* m_param_overlap = nullptr;
    QCheckBox* m_ep_overlap = nullptr;
    QCheckBox* m_grad_release = nullptr;
    QComboBox* m_rank_order = nullptr;
    QSpinBox* m_expert_tp = nullptr;
    QSpinBox* m_first_layers = nullptr;
    QSpinBox* m_last_layers = nullptr;
    bool m_updating = false;
};

} // namespace parallax::views
