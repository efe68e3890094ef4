#include "planner/search_panel.hpp"

#include "async/when_alive.hpp"
#include "jobs/task_outcome.hpp"

#include <QCheckBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace parallax::views {

namespace {

constexpr int kProgressRange = 1000; // STYLE.md: 0..1000, updates under 0.1% skipped

} // namespace

SearchPanel::SearchPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    m_start = new QPushButton(QStringLiteral("Search"), this);
    m_start->setObjectName(QStringLiteral("search_start"));
    m_stop = new QPushButton(QStringLiteral("Cancel"), this);
    m_stop->setObjectName(QStringLiteral("search_cancel"));
    m_apply = new QPushButton(QStringLiteral("Apply"), this);
    m_apply->setObjectName(QStringLiteral("search_apply"));
    m_apply->setToolTip(QStringLiteral("Apply the selected plan (or double-click it); Ctrl+Z undoes"));
    m_top = new QSpinBox(this);
    m_top->setRange(1, 1000);
    m_top->setValue(20);
    m_top->setPrefix(QStringLiteral("top "));
    m_any_framework = new QCheckBox(QStringLiteral("Any framework"), this);
    m_any_framework->setObjectName(QStringLiteral("search_any_framework"));
    m_any_framework->setToolTip(
        QStringLiteral("Off: only plans the scenario's framework (training.framework) can run: its schedules, ZeRO "
                       "or FSDP, context-parallel kinds and overlaps.\nOn: every framework's plans; the Frameworks "
                       "column says which frameworks can run each."));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, kProgressRange);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    bar->addWidget(m_start);
    bar->addWidget(m_stop);
    bar->addWidget(m_top);
    bar->addWidget(m_progress, 1);
    layout->addLayout(bar);
    auto* second = new QHBoxLayout; // a row of its own: the panel keeps its minimum width
    second->addWidget(m_apply);
    second->addWidget(m_any_framework, 1);
    layout->addLayout(second);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_model = new SearchResultsModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_table = new QTableView(this);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SearchResultsModel::rank, Qt::AscendingOrder); // best first until the user sorts
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    layout->addWidget(m_table, 1);
    connect(m_start, &QPushButton::clicked, this, &SearchPanel::start);
    connect(m_stop, &QPushButton::clicked, this, &SearchPanel::cancel);
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex& index) { apply_row(index.row()); });
    connect(m_apply, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows();
        apply_row(rows.isEmpty() ? 0 : rows.front().row());
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SearchPanel::refresh_enabled);
    show_columns_for(false);
    refresh_enabled();
}

SearchPanel::~SearchPanel()
{
    cancel();
}

bool SearchPanel::apply_row(int row)
{
    const QModelIndex source = m_proxy->mapToSource(m_proxy->index(row, 0));
    const SearchRow* r = source.isValid() ? m_model->row_at(source.row()) : nullptr;
    if (!r)
        return false;
    const QString what = QStringLiteral("search result #%1").arg(source.row() + 1);
    if (r->stages.empty())
        emit apply_requested(r->strategy, what);
    else
        emit apply_stages_requested(r->strategy, r->stages, what);
    return true;
}

bool SearchPanel::mixed() const
{
    return m_scenario && (m_scenario->heterogeneous() || m_scenario->cluster.heterogeneous());
}

// A mixed cluster's plans say their stages; they have no CP, EP or virtual stages.
void SearchPanel::show_columns_for(bool mixed)
{
    m_table->setColumnHidden(SearchResultsModel::stages, !mixed);
    for (int c : { SearchResultsModel::cp, SearchResultsModel::ep, SearchResultsModel::vpp })
        m_table->setColumnHidden(c, mixed);
}

void SearchPanel::set_engine(std::shared_ptr<SearchEngine> engine)
{
    m_engine = std::move(engine);
    refresh_enabled();
}

void SearchPanel::set_scenario(const Scenario& s)
{
    const bool was_mixed = mixed();
    m_scenario = s;
    if (was_mixed != mixed() && !running()) { // the other kind's plans would not apply to this cluster
        m_model->set_rows({});
        m_status->clear();
        show_columns_for(mixed());
    }
    refresh_enabled();
}

QString SearchPanel::status_text() const
{
    return m_status->text();
}

void SearchPanel::refresh_enabled()
{
    m_start->setEnabled(m_engine && m_scenario && !running());
    m_stop->setEnabled(running());
    m_apply->setEnabled(m_model->rowCount() > 0 && !running());
    m_top->setEnabled(!running());
    // A mixed cluster's search ranks the plans its own model costs; which framework runs them is a column.
    m_any_framework->setEnabled(!running() && !mixed());
    const QString mixed_text = QStringLiteral(
        "Mixed cluster (node groups): the search chooses which groups form which stages, the layers per stage, "
        "TP per replica and the batch shares, and may leave slow groups idle.");
    if (mixed() && !running() && m_model->rowCount() == 0 && m_status->text().isEmpty())
        m_status->setText(mixed_text);
    else if (!mixed() && m_status->text() == mixed_text)
        m_status->clear();
    const QString no_engine_text = QStringLiteral(
        "No search engine in this build: the strategy search (core/search) is not wired into the window yet.");
    if (!m_engine)
        m_status->setText(no_engine_text);
    else if (m_status->text() == no_engine_text) // the scenario came before the engine
        m_status->clear();
}

void SearchPanel::start()
{
    if (!m_engine || !m_scenario || running())
        return;
    m_cancel = CancelToken {};
    m_last_progress = -1;
    m_progress->setValue(0);
    m_status->setText(QStringLiteral("Searching with %1...").arg(m_engine->name()));
    m_clock.start();
    refresh_enabled();
    const QPointer<SearchPanel> self(this);
    auto engine = m_engine;
    const CancelToken cancel = *m_cancel;
    const Scenario scenario = *m_scenario;
    const int top = m_top->value();
    const bool any_framework = m_any_framework->isChecked();
    auto last = std::make_shared<std::atomic<int>>(-1);
    auto progress = [self, last](double f) {
        const int v = static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * kProgressRange));
        if (v == last->exchange(v))
            return; // throttled: same 0.1% step
        QMetaObject::invokeMethod(
            qApp,
            [self, f] {
                if (self)
                    self->show_progress(f);
            },
            Qt::QueuedConnection);
    };
    QtConcurrent::run([engine, scenario, top, any_framework, progress, cancel] {
        // An exception must not escape: the continuation would be skipped and the panel stay "running".
        TaskOutcome<SearchReport> outcome
            = run_catching([&] { return engine->run(scenario, top, any_framework, progress, cancel); });
        if (outcome.value)
            return std::move(*outcome.value);
        SearchReport failed;
        failed.cancelled = outcome.cancelled;
        failed.error = outcome.cancelled ? QString() : QString::fromStdString(outcome.error);
        return failed;
    }).then(qApp, when_alive(this, [this](const SearchReport& r) { show_report(r); }));
}

void SearchPanel::cancel()
{
    if (m_cancel)
        m_cancel->cancel();
}

void SearchPanel::show_progress(double fraction)
{
    if (!running())
        return;
    const int v = static_cast<int>(std::lround(fraction * kProgressRange));
    if (v == m_last_progress)
        return;
    m_last_progress = v;
    m_progress->setValue(v);
    const double elapsed = m_clock.elapsed() / 1000.0;
    if (fraction > 0.01) {
        const double left = elapsed * (1 - fraction) / fraction;
        m_status->setText(
            QStringLiteral("Searching... %1% (about %2 s left)")
                .arg(QString::number(fraction * 100, 'f', 1), QString::number(left, 'f', left < 10 ? 1 : 0)));
    }
}

void SearchPanel::show_report(const SearchReport& r)
{
    m_cancel.reset();
    if (!r.error.isEmpty()) {
        m_status->setText(QStringLiteral("Search failed: ") + r.error);
    } else {
        show_columns_for(
            std::any_of(r.rows.begin(), r.rows.end(), [](const SearchRow& row) { return !row.stages.empty(); }));
        m_model->set_rows(r.rows);
        m_progress->setValue(r.cancelled ? m_progress->value() : kProgressRange);
        QString what = QStringLiteral("%1 strategies evaluated, %2 feasible, in %3 s; %4 shown")
                           .arg(r.evaluated)
                           .arg(r.feasible)
                           .arg(QString::number(r.seconds, 'f', 2))
                           .arg(r.rows.size());
        if (!r.scope.isEmpty())
            what += QStringLiteral(" (") + r.scope + QStringLiteral(")");
        for (const QString& note : r.notes)
            what += QStringLiteral("\n") + note;
        m_status->setText(r.cancelled ? QStringLiteral("Stopped: ") + what : what);
        m_table->resizeColumnsToContents();
    }
    refresh_enabled();
    emit finished();
}

} // namespace parallax::views
