#include "planner/result_models.hpp"

#include "search/plan_explain.hpp"
#include "spec/strategy_label.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

const std::vector<Metric>& compared_metrics()
{
    // Every metric, in the enum's order: a part added to the prediction is compared without a list to update.
    static const std::vector<Metric> m = [] {
        std::vector<Metric> all;
        for (int i = 0; i < kMetricCount; ++i)
            all.push_back(static_cast<Metric>(i));
        return all;
    }();
    return m;
}

// A mixed plan's TP (or replica count) per stage, "2/1" ("8" when every stage has the same; a stage whose
// replicas differ "1+2"); sorted by the largest.
QVariant mixed_degree(const std::vector<PipelineStageSpec>& stages, bool tp, bool sort)
{
    QStringList parts;
    int largest = 0;
    for (const PipelineStageSpec& st : stages) {
        QStringList values;
        if (!tp)
            values << QString::number(st.replicas.size());
        for (const StageReplica& r : st.replicas)
            if (tp && !values.contains(QString::number(r.tp)))
                values << QString::number(r.tp);
        for (const QString& v : values)
            largest = std::max(largest, v.toInt());
        const QString text = values.join(QLatin1Char('+'));
        if (!parts.contains(text))
            parts << text;
    }
    if (sort)
        return largest;
    return parts.size() == 1 && !parts.front().contains(QLatin1Char('+')) ? QVariant(largest)
                                                                          : QVariant(parts.join(QLatin1Char('/')));
}

} // namespace

void SearchResultsModel::set_rows(std::vector<SearchRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

const SearchRow* SearchResultsModel::row_at(int row) const
{
    return row >= 0 && row < static_cast<int>(m_rows.size()) ? &m_rows[static_cast<std::size_t>(row)] : nullptr;
}

int SearchResultsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SearchResultsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : column_count;
}

QVariant SearchResultsModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[] = { "#", "Stages", "TP", "PP", "DP", "CP", "EP", "VPP", "MB", "ZeRO", "Recompute",
        "Schedule", "Tokens/s", "Step time", "MFU", "Peak memory", "Limited by", "Frameworks", "Why" };
    return section >= 0 && section < column_count ? QString::fromLatin1(names[section]) : QVariant();
}

QVariant SearchResultsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= static_cast<int>(m_rows.size()) || index.column() >= column_count)
        return {};
    const SearchRow& r = m_rows[static_cast<std::size_t>(index.row())];
    const Strategy& s = r.strategy;
    const Prediction& p = r.prediction;
    const bool sort = role == Qt::UserRole;
    if (role != Qt::DisplayRole && !sort && role != Qt::ToolTipRole && role != Qt::TextAlignmentRole)
        return {};
    if (role == Qt::TextAlignmentRole)
        return (index.column() <= mfu && index.column() != stages) || index.column() == peak_memory
            ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
            : QVariant();
    if (role == Qt::ToolTipRole) {
        // The plan in the one notation every output uses, then why it ranks where it does.
        QString tip = r.stages.empty() ? QString::fromStdString(strategy_label(s)) : r.plan;
        if (p.interval.best_measured_mfu_exceeded > 0)
            tip += QStringLiteral("\nBeyond every measured run: %1% MFU predicted, the best of its class measured %2%")
                       .arg(p.mfu * 100, 0, 'f', 1)
                       .arg(p.interval.best_measured_mfu_exceeded * 100, 0, 'f', 1);
        if (!r.explanation.isEmpty())
            tip += QStringLiteral("\n") + r.explanation;
        return tip;
    }
    if (!r.stages.empty() && (index.column() == tp || index.column() == dp))
        return mixed_degree(r.stages, index.column() == tp, sort);
    switch (index.column()) {
    case stages:
        return r.stages.empty() ? QVariant(QStringLiteral("uniform")) : QVariant(r.plan);
    case rank:
        // "2 ≈": within the model's measured error of the best plan.
        if (sort)
            return index.row() + 1;
        return r.indistinguishable_from_best ? QVariant(QString::number(index.row() + 1) + QStringLiteral(" ≈"))
                                             : QVariant(index.row() + 1);
    case tp:
        return s.tp;
    case pp:
        return s.pp;
    case dp:
        return s.dp;
    case cp:
        return s.cp;
    case ep:
        return s.ep;
    case vpp:
        return s.vpp;
    case micro_batch:
        return s.micro_batch;
    case zero:
        return s.zero;
    case recompute:
        return qs(to_string(s.recompute));
    case schedule:
        return qs(to_string(s.schedule));
    case tokens_per_s:
        return sort ? QVariant(p.tokens_per_s) : QVariant(format_count(p.tokens_per_s));
    case step_time:
        return sort ? QVariant(p.step_time_s) : QVariant(format_seconds(p.step_time_s));
    case mfu:
        return sort ? QVariant(p.mfu) : QVariant(QString::number(p.mfu * 100, 'f', 1) + QStringLiteral("%"));
    case peak_memory:
        return sort ? QVariant(p.peak_memory_bytes) : QVariant(format_gib(p.peak_memory_bytes));
    case limiter:
        return r.limiter;
    case frameworks:
        return r.frameworks;
    case explanation:
        return r.explanation;
    default:
        return {};
    }
}

void ComparisonModel::set_predictions(const std::optional<Prediction>& current, const std::optional<Prediction>& pinned)
{
    beginResetModel();
    m_current = current;
    m_pinned = pinned;
    endResetModel();
}

int ComparisonModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_current ? 0 : static_cast<int>(compared_metrics().size());
}

int ComparisonModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : column_count;
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case metric:
        return QStringLiteral("Metric");
    case current:
        return QStringLiteral("B (current)");
    case pinned:
        return QStringLiteral("A (pinned)");
    case delta:
        return QStringLiteral("B vs A");
    default:
        return {};
    }
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !m_current || index.row() >= rowCount() || index.column() >= column_count)
        return {};
    const Metric m = compared_metrics()[static_cast<std::size_t>(index.row())];
    const double b = metric_value(*m_current, m);
    if (role == Qt::ToolTipRole)
        return explanation_html(
            explain_metric(m), m_pinned ? QString::fromStdString(why_moved(m, *m_pinned, *m_current)) : QString());
    if (role == Qt::TextAlignmentRole)
        return index.column() == metric ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case metric:
        return QString::fromStdString(explain_metric(m).title);
    case current:
        return format_metric(m, b);
    case pinned:
        return m_pinned ? QVariant(format_metric(m, metric_value(*m_pinned, m))) : QVariant(QStringLiteral("–"));
    case delta: {
        if (!m_pinned)
            return QStringLiteral("–");
        const double a = metric_value(*m_pinned, m);
        if (std::abs(a) < 1e-12)
            return std::abs(b) < 1e-12 ? QStringLiteral("±0") : QStringLiteral("new");
        return format_percent_delta((b - a) / std::abs(a));
    }
    default:
        return {};
    }
}

QStringList ComparisonModel::dump() const
{
    QStringList out;
    for (int r = 0; r < rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < column_count; ++c)
            cells << data(index(r, c)).toString();
        out << cells.join(QStringLiteral(" | "));
    }
    return out;
}

} // namespace parallax::views
