#pragma once
// Shows one prediction as the same readable table the CLI prints. A view: no model maths.
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <QPlainTextEdit>

namespace parallax::views {

class PredictionTextView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit PredictionTextView(QWidget* parent = nullptr);
    void show_prediction(const Scenario& scenario, const Prediction& prediction);
    void show_error(const QString& message);
};

} // namespace parallax::views
