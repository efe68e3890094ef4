#pragma once
// The planner's main window. This first version opens a scenario (file or preset) and shows its
// prediction; the full planner UI grows on it (issue "The planner window").
#include "scenario.hpp"

#include <QMainWindow>

#include <optional>

class QComboBox;

namespace parallax::views {
class PredictionTextView;
}

namespace parallax::app {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    // Loads and predicts; on bad input shows the error and keeps the previous plan. Returns success.
    bool open_scenario_file(const QString& path);
    bool open_scenario_preset(const QString& name);
    const std::optional<Scenario>& scenario() const { return m_scenario; }
    QString last_error() const { return m_last_error; }

private:
    void show_scenario(const Scenario& s, const QString& label);
    void report_error(const QString& message);
    void open_dialog();

    QComboBox* m_presets = nullptr;
    views::PredictionTextView* m_view = nullptr;
    std::optional<Scenario> m_scenario;
    QString m_last_error;
};

} // namespace parallax::app
