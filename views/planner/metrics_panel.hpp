#pragma once
// The live numbers: step time, tokens/s, TFLOP/s per GPU, MFU, bubble, power, energy per token and
// peak memory, each with its error band where the model has measured one ("80%: 1.60M–1.80M"), its
// delta against the pinned plan ("+12% vs pinned") and a learn tooltip
// (what it is, its formula with the source, why it moved). A banner says when the plan is invalid
// or does not fit in memory.
#include "plots/measured_value.hpp"
#include "search/plan_explain.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QWidget>

#include <vector>

class QLabel;

namespace parallax::views {

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);
    // `pinned` (may be null): the baseline for the deltas; `previous` (may be null): the plan before
    // the latest change, for "why it moved".
    void set_evaluation(const PlanEvaluation& e, const Prediction* pinned, const Prediction* previous);
    void clear();
    QString value_text(Metric m) const;
    QString delta_text(Metric m) const;
    QString banner_text() const;
    static const std::vector<Metric>& shown_metrics();
    // A run's measurement of this very plan under a card ("measured 14.9 s (14.7–15.2) +3.8%"); nullopt clears.
    void set_measured(Metric m, const std::optional<MeasuredValue>& v);
    QString measured_text(Metric m) const;
    // "80%: 1,600,000–1,800,000" under the cards whose metric has an error band; empty otherwise.
    QString band_text(Metric m) const;

private:
    struct Card {
        Metric metric;
        QWidget* frame = nullptr;
        QLabel* title = nullptr;
        QLabel* value = nullptr;
        QLabel* delta = nullptr;
        QLabel* band = nullptr; // the prediction's error band, hidden when it has none
        QLabel* measured = nullptr; // created when a run measured the plan
    };
    void show_band(Card& c, const Prediction& p);
    std::vector<Card> m_cards;
    QLabel* m_banner = nullptr;
};

} // namespace parallax::views
