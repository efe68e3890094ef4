#include "planner/prediction_text_view.hpp"

#include "io/prediction_io.hpp"

#include <QFontDatabase>

namespace parallax::views {

PredictionTextView::PredictionTextView(QWidget* parent)
    : QPlainTextEdit(parent)
{
    setReadOnly(true);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setLineWrapMode(QPlainTextEdit::NoWrap);
}

void PredictionTextView::show_prediction(const Scenario& scenario, const Prediction& prediction)
{
    setPlainText(QString::fromStdString(prediction_to_text(scenario, prediction)));
}

void PredictionTextView::show_error(const QString& message)
{
    setPlainText(message);
}

} // namespace parallax::views
