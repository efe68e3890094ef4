#pragma once
// Item models over core results (they adapt values, never compute):
// - SearchResultsModel: the ranked search results, sortable by every column (numbers sort as numbers
//   through Qt::UserRole).
// - ComparisonModel: the current plan B against the pinned plan A, metric by metric, with deltas.
#include "planner/search_engine.hpp"
#include "spec/prediction.hpp"

#include <QAbstractTableModel>

#include <optional>
#include <vector>

namespace parallax::views {

class SearchResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        rank,
        stages, // a mixed-cluster plan's stages (SearchRow::plan); hidden for plain plans
        tp,
        pp,
        dp,
        cp,
        ep,
        vpp,
        micro_batch,
        zero,
        recompute,
        schedule,
        tokens_per_s,
        step_time,
        mfu,
        peak_memory,
        limiter,
        frameworks,
        explanation,
        column_count
    };
    using QAbstractTableModel::QAbstractTableModel;
    void set_rows(std::vector<SearchRow> rows);
    const SearchRow* row_at(int row) const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::vector<SearchRow> m_rows;
};

class ComparisonModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { metric, current, pinned, delta, column_count };
    using QAbstractTableModel::QAbstractTableModel;
    void set_predictions(const std::optional<Prediction>& current, const std::optional<Prediction>& pinned);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    // The rows as text ("Step time | 14.36 s | 12.10 s | +18.7%"), for reports and tests.
    QStringList dump() const;

private:
    std::optional<Prediction> m_current;
    std::optional<Prediction> m_pinned;
};

} // namespace parallax::views
