#include "remote/runs_panel.hpp"

#include "style/view_style.hpp"

#include <QAction>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

// The log pane keeps the end of a long log: enough lines to read what went wrong, bounded memory.
constexpr int kMaxLogBlocks = 20000;

} // namespace

RunsPanel::RunsPanel(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("runs_panel"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(2, 2, 2, 2);
    v->setSpacing(2);

    v->addWidget(build_toolbar());
    v->addLayout(build_filters());
    build_table();
    v->addWidget(build_views(), 1);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("runs_status"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(m_status);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &RunsFilterModel::set_text);
    connect(m_state, &QComboBox::currentIndexChanged, this, [this] {
        m_proxy->set_state_filter(static_cast<RunsFilterModel::StateFilter>(m_state->currentData().toInt()));
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        update_actions();
        Q_EMIT selection_changed(selected_run_ids());
    });
    // A row that changed state may change what the buttons can do.
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this] { update_actions(); });
    update_actions();
}

QToolBar* RunsPanel::build_toolbar()
{
    auto* bar = new QToolBar(this);
    bar->setObjectName(QStringLiteral("runs_toolbar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_send = bar->addAction(QStringLiteral("Send as validation run..."));
    m_send->setObjectName(QStringLiteral("send_validation_run"));
    m_send->setToolTip(
        QStringLiteral("Generate the job of the current plan, review and edit its files, send it (Ctrl+R)"));
    m_cancel = bar->addAction(QStringLiteral("Cancel run..."));
    m_cancel->setObjectName(QStringLiteral("cancel_run"));
    m_cancel->setToolTip(
        QStringLiteral("Ask the cluster to stop the selected run (scancel / SIGTERM), after a confirmation"));
    m_attach = bar->addAction(QStringLiteral("Attach"));
    m_attach->setObjectName(QStringLiteral("attach_run"));
    m_attach->setToolTip(
        QStringLiteral("Watch the selected run again: an unfinished one (done for every unfinished run at start), "
                       "or a failed one that reached the cluster, whose job may have run on"));
    m_trace = bar->addAction(QStringLiteral("Measured trace"));
    m_trace->setObjectName(QStringLiteral("fetch_trace"));
    m_trace->setToolTip(
        QStringLiteral("Copy the run's Chrome/Perfetto trace (*trace*.json in its folder on the cluster) "
                       "and draw it on the timeline under the prediction"));
    m_calibrate = bar->addAction(QStringLiteral("Calibrate from these runs..."));
    m_calibrate->setObjectName(QStringLiteral("calibrate_from_runs"));
    m_calibrate->setIconText(QStringLiteral("Calibrate...")); // the toolbar's short text; menus say it all
    m_calibrate->setToolTip(
        QStringLiteral("Fit a calibration to the selected completed runs (one run selected: every run of its "
                       "cluster), show each run's error before and after, and save or use it"));
    bar->addSeparator();
    m_profiles = bar->addAction(QStringLiteral("Cluster profiles..."));
    m_profiles->setObjectName(QStringLiteral("edit_cluster_profiles"));
    m_profiles->setIconText(QStringLiteral("Profiles...")); // short, so the toolbar fits a dock's width
    m_refresh = bar->addAction(QStringLiteral("Refresh"));
    m_refresh->setObjectName(QStringLiteral("refresh_runs"));
    return bar;
}

QHBoxLayout* RunsPanel::build_filters()
{
    auto* filters = new QHBoxLayout;
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("run_filter"));
    m_filter->setPlaceholderText(QStringLiteral("Filter: run id, cluster, framework, plan, state"));
    m_filter->setClearButtonEnabled(true);
    m_state = new QComboBox(this);
    m_state->setObjectName(QStringLiteral("run_state_filter"));
    m_state->addItem(QStringLiteral("All runs"), static_cast<int>(RunsFilterModel::StateFilter::all));
    m_state->addItem(QStringLiteral("Unfinished"), static_cast<int>(RunsFilterModel::StateFilter::active));
    m_state->addItem(QStringLiteral("Completed"), static_cast<int>(RunsFilterModel::StateFilter::completed));
    m_state->addItem(
        QStringLiteral("Failed or cancelled"), static_cast<int>(RunsFilterModel::StateFilter::failed_or_cancelled));
    filters->addWidget(m_filter, 1);
    filters->addWidget(m_state);
    return filters;
}

void RunsPanel::build_table()
{
    m_model = new RunsModel(this);
    m_proxy = new RunsFilterModel(this);
    m_proxy->setSourceModel(m_model);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("runs_table"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunsModel::started, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 4);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setToolTip(QStringLiteral("Select several runs to compare them in the overlay"));
}

// The table on top (a few rows are enough to pick from), the selected runs' overlay and log side by side.
QWidget* RunsPanel::build_views()
{
    m_overlay = new MeasuredOverlayView(this);
    auto* overlay_scroll = new QScrollArea(this);
    overlay_scroll->setWidgetResizable(true);
    overlay_scroll->setFrameShape(QFrame::NoFrame);
    overlay_scroll->setWidget(m_overlay);

    auto* log_box = new QWidget(this);
    auto* lv = new QVBoxLayout(log_box);
    lv->setContentsMargins(0, 0, 0, 0);
    lv->setSpacing(1);
    m_log_title = new QLabel(QStringLiteral("Log"), log_box);
    m_log = new QPlainTextEdit(log_box);
    m_log->setObjectName(QStringLiteral("run_log"));
    m_log->setReadOnly(true);
    m_log->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_log->setMaximumBlockCount(kMaxLogBlocks);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    lv->addWidget(m_log_title);
    lv->addWidget(m_log, 1);

    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(overlay_scroll);
    bottom->addWidget(log_box);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("runs_split"));
    split->addWidget(m_table);
    split->addWidget(bottom);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    return split;
}

QStringList RunsPanel::selected_run_ids() const
{
    QStringList out;
    QModelIndexList rows = m_table->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    for (const QModelIndex& i : rows)
        out << i.data(RunsModel::RunIdRole).toString();
    return out;
}

bool RunsPanel::select_run(const QString& run_id)
{
    const int src = m_model->row_of(run_id);
    if (src < 0)
        return false;
    const QModelIndex i = m_proxy->mapFromSource(m_model->index(src, 0));
    if (!i.isValid())
        return false;
    m_table->selectionModel()->select(
        i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows | QItemSelectionModel::Current);
    m_table->scrollTo(i);
    return true;
}

bool RunsPanel::select_runs(const QStringList& run_ids)
{
    QItemSelection selection;
    QModelIndex first;
    for (const QString& id : run_ids) {
        const int src = m_model->row_of(id);
        const QModelIndex i = src < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(src, 0));
        if (!i.isValid())
            return false;
        selection.select(i, i);
        if (!first.isValid())
            first = i;
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (first.isValid())
        m_table->scrollTo(first);
    return !run_ids.isEmpty();
}

void RunsPanel::update_actions()
{
    const QStringList ids = selected_run_ids();
    const RunRow* r = ids.size() == 1 ? m_model->find(ids.front()) : nullptr;
    m_cancel->setEnabled(r && r->active());
    m_attach->setEnabled(r && r->attachable());
    m_trace->setEnabled(r != nullptr);
    m_calibrate->setEnabled(!ids.isEmpty());
}

void RunsPanel::set_status(const QString& text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(
        error ? QStringLiteral("QLabel { color: %1; }").arg(bad_colour(is_dark(palette())).name()) : QString());
}

QString RunsPanel::status_text() const
{
    return m_status->text();
}

void RunsPanel::set_log(const QString& run_id, const QString& text, bool truncated)
{
    m_log_run = run_id;
    m_log_title->setText(run_id.isEmpty()
            ? QStringLiteral("Log")
            : QStringLiteral("Log of run %1%2").arg(run_id, truncated ? QStringLiteral(" (its end)") : QString()));
    m_log->setPlainText(text);
    m_log->verticalScrollBar()->setValue(m_log->verticalScrollBar()->maximum());
}

void RunsPanel::append_log(const QString& run_id, const QString& text)
{
    if (run_id != m_log_run || text.isEmpty())
        return;
    QScrollBar* sb = m_log->verticalScrollBar();
    const bool at_end = sb->value() >= sb->maximum() - 2;
    m_log->moveCursor(QTextCursor::End);
    m_log->insertPlainText(text);
    if (at_end)
        sb->setValue(sb->maximum());
}

} // namespace parallax::views
