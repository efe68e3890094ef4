#include "gui/report_controller.hpp"

#include "async/when_alive.hpp"
#include "jobs/task_outcome.hpp"
#include "plots/plot_export.hpp"

#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

namespace {

// Empty when written.
QString write_report(const ReportInputs& in, const QString& path)
{
    QString error;
    views::write_text_atomically(path, report_html(in), &error); // says why whenever it fails
    return error;
}

} // namespace

ReportController::ReportController(QObject* parent)
    : QObject(parent)
{
}

bool ReportController::write(const ReportInputs& in, const QString& path, QString* error)
{
    const QString failure = write_report(in, path);
    if (error && !failure.isEmpty())
        *error = failure;
    return failure.isEmpty();
}

void ReportController::write_in_background(ReportInputs in, const QString& path)
{
    ++m_writing;
    QtConcurrent::run([in = std::move(in), path] {
        // A throw (building the HTML of a huge plan) must still end in report_written.
        TaskOutcome<QString> outcome = run_catching([&] { return write_report(in, path); });
        return outcome.value ? *outcome.value : QString::fromStdString(outcome.error);
    }).then(qApp, views::when_alive(this, [this, path](const QString& error) {
        --m_writing;
        emit report_written(path, error);
    }));
}

} // namespace parallax::app
