#pragma once
// The search panel: runs a SearchEngine off the GUI thread with progress (0..1000, throttled, with
// a remaining-time estimate) and Cancel (reported as "stopped"), shows the ranked results in a
// sortable table with their explanations; activating a row (or Apply) asks to apply that strategy, or on a
// mixed cluster (cluster.groups) that plan's stages. Without an engine the panel says so and stays disabled.
#include "jobs/cancel_token.hpp"
#include "planner/result_models.hpp"
#include "planner/search_engine.hpp"
#include "spec/scenario.hpp"

#include <QElapsedTimer>
#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace parallax::views {

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(QWidget* parent = nullptr);
    ~SearchPanel() override;
    void set_engine(std::shared_ptr<SearchEngine> engine);
    void set_scenario(const Scenario& s);
    bool running() const { return m_cancel.has_value(); }
    SearchResultsModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    QCheckBox* any_framework_box() const { return m_any_framework; }
    QString status_text() const;
    QPushButton* apply_button() const { return m_apply; }
    // Asks to apply the plan in the table's (sorted) row `row`; false when there is none.
    bool apply_row(int row);

public slots:
    void start();
    void cancel();

signals:
    void apply_requested(const parallax::Strategy& s, const QString& what);
    // A mixed-cluster plan: its strategy and its stages (strategy.stages).
    void apply_stages_requested(
        const parallax::Strategy& s, const std::vector<parallax::PipelineStageSpec>& stages, const QString& what);
    void finished();

private:
    void show_progress(double fraction);
    void show_report(const SearchReport& r);
    void refresh_enabled();
    void show_columns_for(bool mixed);
    bool mixed() const;

    std::shared_ptr<SearchEngine> m_engine;
    std::optional<Scenario> m_scenario;
    std::optional<CancelToken> m_cancel; // set while a search runs
    QElapsedTimer m_clock;
    int m_last_progress = -1;
    QPushButton* m_start = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_apply = nullptr;
    QSpinBox* m_top = nullptr;
    QCheckBox* m_any_framework = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QTableView* m_table = nullptr;
    SearchResultsModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
};

} // namespace parallax::views
