#pragma once
// The serving mode's controls: sliders for one instance's TP, PP, EP, attention DP and the replicas
// (each resting only on values the serving rules allow, blocked stops saying why), the workload (prompt
// and output lengths, the load), the engine, the precision of weights and KV cache, speculative decoding
// and the SLO. Every
// change emits the edited scenario; the controls never compute a prediction.
#include "serving/serving_spec.hpp"
#include "viewdata/serving_stops.hpp"

#include <QString>
#include <QWidget>

#include <map>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace parallax::views {

class DegreeSlider;

class ServingControls : public QWidget {
    Q_OBJECT
public:
    explicit ServingControls(QWidget* parent = nullptr);
    // Shows `s` without emitting anything.
    void set_scenario(const ServingScenario& s);
    const ServingScenario& scenario() const { return m_scenario; }
    DegreeSlider* slider(ServingDegree d) const { return m_sliders.at(d); }
    QComboBox* engine_box() const { return m_engine; }
    QCheckBox* mixed_chunk_box() const { return m_mixed_chunk; }
    QComboBox* exchange_box() const { return m_exchange; }
    QDoubleSpinBox* load_box() const { return m_load_value; }
    QComboBox* draft_box() const { return m_draft; }
    QSpinBox* draft_tokens_box() const { return m_draft_tokens; }
    QDoubleSpinBox* acceptance_box() const { return m_acceptance; }

signals:
    // `what` names the change for the undo history ("tp 8", "concurrency 64").
    void edited(const parallax::ServingScenario& s, const QString& what);

private:
    QWidget* build_deployment();
    QWidget* build_workload();
    QWidget* build_engine();
    QWidget* build_speculative();
    void show_speculative();
    void read_speculative(bool acceptance_edited);
    void show_degrees();
    void show_workload();
    void emit_edit(const ServingScenario& s, const QString& what);
    void read_workload();
    void read_engine();
    void show_exchange();
    void read_exchange();

    ServingScenario m_scenario;
    bool m_updating = false;
    std::map<ServingDegree, DegreeSlider*> m_sliders;
    std::map<ServingDegree, QLabel*> m_degree_values;
    QLabel* m_disaggregated = nullptr;
    QSpinBox* m_isl = nullptr;
    QSpinBox* m_osl = nullptr;
    QComboBox* m_load_kind = nullptr;
    QDoubleSpinBox* m_load_value = nullptr;
    QComboBox* m_engine = nullptr;
    QComboBox* m_exchange = nullptr;
    QCheckBox* m_mixed_chunk = nullptr;
    QComboBox* m_weights = nullptr;
    QComboBox* m_kv = nullptr;
    QDoubleSpinBox* m_ttft = nullptr;
    QDoubleSpinBox* m_tpot = nullptr;
    QComboBox* m_draft = nullptr;
    QSpinBox* m_draft_tokens = nullptr;
    QDoubleSpinBox* m_acceptance = nullptr;
};

} // namespace parallax::views
