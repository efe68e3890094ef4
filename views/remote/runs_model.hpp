#pragma once
// The runs table: one row per run of the run store (id, state, cluster, framework, plan, steps, measured
// against predicted step time and tokens/s with the error, started and finished). RunRow is a plain value made
// off the GUI thread (remote::RunCatalog::rows); the model adapts rows, never reads the store. Live updates
// merge rows in place (a run that changed is one dataChanged, a new run one inserted row), so the selection and
// the sort survive a poll. RunsFilterModel sorts numbers as numbers (missing values last) and filters by text
// and by state.
#include "runs/run_row.hpp"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <optional>
#include <vector>

namespace parallax::views {

using remote::RunRow;

class RunsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        id,
        state,
        cluster,
        framework,
        plan,
        steps,
        step_measured,
        step_predicted,
        step_error,
        tps_measured,
        tps_predicted,
        tps_error,
        started,
        finished,
        column_count
    };
    enum Role {
        SortRole = Qt::UserRole, // numbers as numbers; invalid when missing
        RunIdRole,
        ActiveRole, // bool: not finished
    };
    using QAbstractTableModel::QAbstractTableModel;

    // The whole store, newest first: rows are merged (updated, inserted, removed), not reset.
    void set_rows(const std::vector<RunRow>& rows);
    // One run changed (or is new: it goes on top).
    void upsert(const RunRow& row);
    // The state from a live signal, before the store is read again.
    void set_state(const QString& run_id, remote::RunState state, const QString& detail);
    int row_of(const QString& run_id) const; // -1 when absent
    const RunRow* row_at(int row) const;
    const RunRow* find(const QString& run_id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    // The rows as text ("id | state | ..."), for tests and reports.
    QStringList dump() const;

private:
    std::vector<RunRow> m_rows;
};

class RunsFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    enum class StateFilter { all, active, completed, failed_or_cancelled };
    explicit RunsFilterModel(QObject* parent = nullptr);
    void set_text(const QString& text); // case-insensitive, in id, state, cluster, framework, plan and description
    void set_state_filter(StateFilter f);
    StateFilter state_filter() const { return m_state; }

protected:
    bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    QString m_text;
    StateFilter m_state = StateFilter::all;
};

} // namespace parallax::views
