#include "remote/runs_model.hpp"

#include "style/view_style.hpp"

#include <QGuiApplication>

#include <cmath>
#include <optional>

namespace parallax::views {

namespace {

// "2024-05-01T12:03:04.123Z" -> "2024-05-01 12:03:04" (UTC, as stored).
QString short_time(const QString& iso)
{
    QString t = iso.left(19);
    t.replace(u'T', u' ');
    return t;
}

// How far off a prediction may be before it is drawn as a miss (docs/accuracy.md's tables quote ±10%).
constexpr double kGoodError = 0.10;
constexpr double kFairError = 0.25;

} // namespace

// ---------------------------------------------------------------------------------------------

void RunsModel::set_rows(const std::vector<RunRow>& rows)
{
    // Removed runs first (bottom up), then each run updated in place or inserted where the store has it.
    for (int i = static_cast<int>(m_rows.size()) - 1; i >= 0; --i) {
        const QString& id = m_rows[static_cast<std::size_t>(i)].id;
        const bool kept = std::any_of(rows.begin(), rows.end(), [&](const RunRow& r) { return r.id == id; });
        if (!kept) {
            beginRemoveRows({}, i, i);
            m_rows.erase(m_rows.begin() + i);
            endRemoveRows();
        }
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const int at = row_of(rows[i].id);
        if (at >= 0) {
            if (!(m_rows[static_cast<std::size_t>(at)] == rows[i])) {
                m_rows[static_cast<std::size_t>(at)] = rows[i];
                Q_EMIT dataChanged(index(at, 0), index(at, column_count - 1));
            }
            continue;
        }
        const int pos = std::min(static_cast<int>(i), static_cast<int>(m_rows.size()));
        beginInsertRows({}, pos, pos);
        m_rows.insert(m_rows.begin() + pos, rows[i]);
        endInsertRows();
    }
}

void RunsModel::upsert(const RunRow& row)
{
    const int at = row_of(row.id);
    if (at < 0) {
        beginInsertRows({}, 0, 0);
        m_rows.insert(m_rows.begin(), row);
        endInsertRows();
        return;
    }
    if (m_rows[static_cast<std::size_t>(at)] == row)
        return;
    m_rows[static_cast<std::size_t>(at)] = row;
    Q_EMIT dataChanged(index(at, 0), index(at, column_count - 1));
}

void RunsModel::set_state(const QString& run_id, remote::RunState state, const QString& detail)
{
    const int at = row_of(run_id);
    if (at < 0)
        return;
    RunRow& r = m_rows[static_cast<std::size_t>(at)];
    if (r.state == state && r.detail == detail)
        return;
    r.state = state;
    r.detail = detail;
    Q_EMIT dataChanged(index(at, 0), index(at, column_count - 1));
}

int RunsModel::row_of(const QString& run_id) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == run_id)
            return static_cast<int>(i);
    return -1;
}

const RunRow* RunsModel::row_at(int row) const
{
    return row >= 0 && row < static_cast<int>(m_rows.size()) ? &m_rows[static_cast<std::size_t>(row)] : nullptr;
}

const RunRow* RunsModel::find(const QString& run_id) const
{
    return row_at(row_of(run_id));
}

int RunsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : column_count;
}

QVariant RunsModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || section < 0 || section >= column_count)
        return {};
    static const char* names[] = { "Run", "State", "Cluster", "Framework", "Plan", "Steps", "Step time", "Predicted",
        "Error", "Tokens/s/GPU", "Predicted", "Error", "Started (UTC)", "Finished (UTC)" };
    static const char* tips[]
        = { "Run id (UTC start time and a random suffix)", "State as the cluster last reported it", "Cluster profile",
              "What ran", "Scenario the plan came from", "Training steps parsed from the log",
              "Measured step time: median of the steady-state steps (all but the first)",
              "Predicted step time of what ran (the probe's workload, or the plan), made at dispatch",
              "(measured - predicted) / predicted", "Measured tokens/s per GPU: median of the steady-state steps",
              "Predicted tokens/s per GPU", "(measured - predicted) / predicted", "When the run was stored",
              "When it completed, failed or was cancelled" };
    if (role == Qt::DisplayRole)
        return QString::fromLatin1(names[section]);
    if (role == Qt::ToolTipRole)
        return QString::fromLatin1(tips[section]);
    return {};
}

namespace {

using Col = RunsModel::Column;

QVariant number_or_none(const std::optional<double>& v)
{
    return v ? QVariant(*v) : QVariant();
}

// A prediction's error as text; "n/a" when the run had no prediction at all, "–" when not yet measured.
QVariant error_text(const RunRow& r, const std::optional<double>& e)
{
    if (!e)
        return r.prediction_source == QLatin1String("none") ? QStringLiteral("n/a") : QStringLiteral("–");
    return format_percent_delta(*e);
}

QVariant error_colour(const RunRow& r, int c)
{
    if (c == Col::state)
        return r.state == remote::RunState::failed ? QVariant(bad_colour(is_dark(QGuiApplication::palette())))
                                                   : QVariant();
    if (c != Col::step_error && c != Col::tps_error)
        return {};
    const auto e = c == Col::step_error ? r.step_error() : r.tps_error();
    if (!e)
        return {};
    const bool dark = is_dark(QGuiApplication::palette());
    if (std::abs(*e) <= kGoodError)
        return good_colour(dark);
    if (std::abs(*e) > kFairError)
        return bad_colour(dark);
    return {};
}

QVariant tooltip(const RunRow& r, int c)
{
    switch (c) {
    case Col::state:
        return r.detail;
    case Col::plan:
        return QString(r.plan + QStringLiteral("\n") + r.description);
    case Col::step_error:
    case Col::tps_error:
    case Col::step_predicted:
    case Col::tps_predicted:
        if (!r.why.isEmpty())
            return QString(QStringLiteral("Not compared: ") + r.why);
        return r.prediction_source == QLatin1String("workload")
            ? QStringLiteral("Compared with the prediction of the probe's workload (its layers, micro-batches "
                             "and GPipe order), made at dispatch")
            : QStringLiteral("Compared with the prediction of the plan, made at dispatch");
    case Col::id:
        return r.job_id.isEmpty() ? QVariant() : QVariant(QString(QStringLiteral("job ") + r.job_id));
    default:
        return {};
    }
}

// Numbers sort as numbers (invalid when missing); text columns sort as their text (ids and ISO times by time).
std::optional<QVariant> sort_number(const RunRow& r, int c)
{
    switch (c) {
    case Col::steps:
        return QVariant(r.steps);
    case Col::step_measured:
        return number_or_none(r.step_measured);
    case Col::step_predicted:
        return number_or_none(r.step_predicted);
    case Col::step_error:
        return number_or_none(r.step_error());
    case Col::tps_measured:
        return number_or_none(r.tps_measured);
    case Col::tps_predicted:
        return number_or_none(r.tps_predicted);
    case Col::tps_error:
        return number_or_none(r.tps_error());
    default:
        return std::nullopt;
    }
}

QVariant display_text(const RunRow& r, int c, bool for_sorting)
{
    const QString none = QStringLiteral("–");
    switch (c) {
    case Col::id:
        return r.id;
    case Col::state:
        return r.state_text();
    case Col::cluster:
        return r.cluster;
    case Col::framework:
        return r.framework;
    case Col::plan:
        // A file's name (the whole path is in the tooltip); a preset's name as it is.
        return for_sorting ? r.plan : r.plan.section(u'/', -1);
    case Col::steps:
        return r.steps;
    case Col::step_measured:
        return r.step_measured ? format_seconds(*r.step_measured) : none;
    case Col::step_predicted:
        return r.step_predicted ? format_seconds(*r.step_predicted) : none;
    case Col::step_error:
        return error_text(r, r.step_error());
    case Col::tps_measured:
        return r.tps_measured ? format_count(*r.tps_measured) : none;
    case Col::tps_predicted:
        return r.tps_predicted ? format_count(*r.tps_predicted) : none;
    case Col::tps_error:
        return error_text(r, r.tps_error());
    case Col::started:
        return for_sorting ? r.created : short_time(r.created);
    case Col::finished:
        return for_sorting ? r.finished : short_time(r.finished);
    default:
        return {};
    }
}

} // namespace

QVariant RunsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= static_cast<int>(m_rows.size()) || index.column() >= column_count)
        return {};
    const RunRow& r = m_rows[static_cast<std::size_t>(index.row())];
    const int c = index.column();
    switch (role) {
    case RunIdRole:
        return r.id;
    case ActiveRole:
        return r.active();
    case Qt::TextAlignmentRole: {
        const bool numeric = c == steps || (c >= step_measured && c <= tps_error);
        return numeric ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    }
    case Qt::ForegroundRole:
        return error_colour(r, c);
    case Qt::ToolTipRole:
        return tooltip(r, c);
    case SortRole:
        return sort_number(r, c).value_or(display_text(r, c, true));
    case Qt::DisplayRole:
        return display_text(r, c, false);
    default:
        return {};
    }
}

QStringList RunsModel::dump() const
{
    QStringList out;
    for (int row = 0; row < rowCount(); ++row) {
        QStringList cells;
        for (int c = 0; c < column_count; ++c)
            cells << data(index(row, c)).toString();
        out << cells.join(QStringLiteral(" | "));
    }
    return out;
}

// ---------------------------------------------------------------------------------------------

RunsFilterModel::RunsFilterModel(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(RunsModel::SortRole);
    setDynamicSortFilter(true);
}

void RunsFilterModel::set_text(const QString& text)
{
    m_text = text.trimmed();
    invalidateRowsFilter();
}

void RunsFilterModel::set_state_filter(StateFilter f)
{
    m_state = f;
    invalidateRowsFilter();
}

bool RunsFilterModel::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const
{
    const auto* m = qobject_cast<const RunsModel*>(sourceModel());
    const RunRow* r = m ? m->row_at(source_row) : nullptr;
    if (!r || source_parent.isValid())
        return r != nullptr;
    switch (m_state) {
    case StateFilter::all:
        break;
    case StateFilter::active:
        if (!r->active())
            return false;
        break;
    case StateFilter::completed:
        if (r->state != remote::RunState::completed)
            return false;
        break;
    case StateFilter::failed_or_cancelled:
        if (r->state != remote::RunState::failed && r->state != remote::RunState::cancelled)
            return false;
        break;
    }
    if (m_text.isEmpty())
        return true;
    const QString state_text = r->state_text();
    for (const QString* field : { &r->id, &state_text, &r->cluster, &r->framework, &r->plan, &r->description })
        if (field->contains(m_text, Qt::CaseInsensitive))
            return true;
    return false;
}

bool RunsFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    const QVariant a = left.data(RunsModel::SortRole);
    const QVariant b = right.data(RunsModel::SortRole);
    // Missing numbers sort after every present one, whichever the order.
    const bool a_missing = !a.isValid();
    const bool b_missing = !b.isValid();
    if (a_missing || b_missing) {
        if (a_missing == b_missing)
            return false;
        return sortOrder() == Qt::AscendingOrder ? b_missing : a_missing;
    }
    if (a.typeId() == QMetaType::Double || a.typeId() == QMetaType::Int)
        return a.toDouble() < b.toDouble();
    return QString::compare(a.toString(), b.toString(), Qt::CaseInsensitive) < 0;
}

} // namespace parallax::views
