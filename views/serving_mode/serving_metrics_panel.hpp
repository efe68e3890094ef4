#pragma once
// The serving mode's live numbers: time to first token, time per output token, end-to-end latency,
// throughput (whole deployment, per GPU, per user), requests/s, the running batch against what memory
// holds, memory per GPU and its parts, where a decode and a prefill step spend their time, power and energy
// per token. The latency and throughput cards carry
// their error band (what the model's errors on measured serving rows give for this kind of deployment). A
// banner says when the deployment breaks a rule, does not fit or misses its SLO; the prediction's warnings are
// listed under the cards.
#include "viewdata/serving_evaluation.hpp"

#include <QString>
#include <QWidget>

#include <vector>

class QLabel;

namespace parallax::views {

class ServingMetricsPanel : public QWidget {
    Q_OBJECT
public:
    enum class Card : unsigned char {
        ttft,
        tpot,
        e2e,
        tokens_per_s,
        tokens_per_s_per_gpu,
        tokens_per_s_per_user,
        requests_per_s,
        batch,
        memory,
        power,
        energy
    };
    explicit ServingMetricsPanel(QWidget* parent = nullptr);
    void set_evaluation(const ServingEvaluation& e);
    QString value_text(Card c) const;
    // The card's error band as shown ("80%: 57.9 ms–162 ms"); empty when the card has none.
    QString band_text(Card c) const;
    QString banner_text() const;
    QString memory_text() const; // the memory parts line
    QString steps_text() const; // the decode and prefill steps' parts
    QString warnings_text() const;

private:
    struct CardWidgets {
        Card card;
        QLabel* title = nullptr;
        QLabel* value = nullptr;
        QLabel* band = nullptr; // the error band under the value (latency and throughput cards)
    };
    void show_values(const ServingPrediction& p);
    void show_banner(const ServingEvaluation& e);
    std::vector<CardWidgets> m_cards;
    QLabel* m_banner = nullptr;
    QLabel* m_memory = nullptr;
    QLabel* m_steps = nullptr;
    QLabel* m_warnings = nullptr;
};

} // namespace parallax::views
