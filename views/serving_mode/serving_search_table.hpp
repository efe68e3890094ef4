#pragma once
// The serving mode's deployment search: a button that starts it (the window runs it off the GUI
// thread), a line saying how many deployments were tried, fit and met the SLO, and the best ones as a
// table (deployment, tokens/s per GPU and per user, TTFT, TPOT, GPUs, on the Pareto front or not).
// Double-clicking a row, or "Apply", hands that deployment back to the window.
#include "serving/serving_search.hpp"

#include <QString>
#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace parallax::views {

class ServingSearchTable : public QWidget {
    Q_OBJECT
public:
    explicit ServingSearchTable(QWidget* parent = nullptr);
    // While running, the search button reads "Cancel search" and asks to cancel.
    void set_running(bool running);
    void set_cancelled();
    void set_result(const ServingSearchResult& r);
    void set_failed(const QString& error);
    QTableWidget* table() const { return m_table; }
    QString summary() const;
    const ServingSearchResult& result() const { return m_result; }
    QPushButton* search_button() const { return m_search; }

signals:
    void search_requested();
    void cancel_requested(); // the search button while a search runs
    void apply_requested(const parallax::Deployment& d);

private:
    void apply_row(int row);
    QPushButton* m_search = nullptr;
    QPushButton* m_apply = nullptr;
    QLabel* m_summary = nullptr;
    QTableWidget* m_table = nullptr;
    ServingSearchResult m_result;
    bool m_running = false;
};

} // namespace parallax::views
