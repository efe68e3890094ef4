#pragma once
// The planner's window for a co-location scenario (docs/serving.md, "Co-location"): several models on one
// pool of mixed GPUs, planned off the GUI thread and shown by views/serving_mode/colocation_view.
#include "viewdata/colocation_grid.hpp"

#include <QMainWindow>
#include <QThreadPool>

#include <memory>

namespace parallax::views {
class ColocationView;
}

namespace parallax::app {

class ColocationWindow : public QMainWindow {
    Q_OBJECT
public:
    // `interactive` false: no dialogs (tests, screenshots).
    explicit ColocationWindow(bool interactive = true, QWidget* parent = nullptr);
    ~ColocationWindow() override;

    // Loads and plans a co-location file; on bad input shows the error (file, key, rule) and returns false.
    bool open_file(const QString& path);
    const ColocationEvaluation* evaluation() const { return m_evaluation.get(); }
    bool wait_for_evaluation(int timeout_ms);
    views::ColocationView* view() const { return m_view; }
    QString last_error() const { return m_error; }

signals:
    void evaluated();

private:
    void plan(const ColocationScenario& s);
    bool m_interactive = true;
    views::ColocationView* m_view = nullptr;
    QThreadPool m_pool;
    std::shared_ptr<const ColocationEvaluation> m_evaluation;
    bool m_running = false;
    QString m_error;
};

} // namespace parallax::app
