#include "serving_mode/serving_search_table.hpp"

#include "io/serving_prediction_io.hpp"
#include "style/view_style.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

constexpr int kColumns = 7; // deployment, tokens/s per GPU and per user, TTFT, TPOT, GPUs, Pareto

QTableWidgetItem* number_item(double v, const QString& text)
{
    auto* item = new QTableWidgetItem(text);
    item->setData(Qt::UserRole, v);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

} // namespace

ServingSearchTable::ServingSearchTable(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    m_search = new QPushButton(QStringLiteral("Search deployments"), this);
    m_search->setObjectName(QStringLiteral("serving_search"));
    m_search->setToolTip(QStringLiteral("Every TP/PP/EP/attention-DP layout and every prefill/decode split this "
                                        "cluster allows, ranked by tokens/s per GPU among those meeting the SLO"));
    m_apply = new QPushButton(QStringLiteral("Apply"), this);
    m_apply->setEnabled(false);
    buttons->addWidget(m_search);
    buttons->addWidget(m_apply);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    m_summary = new QLabel(QStringLiteral("Not searched yet."), this);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);
    m_table = new QTableWidget(0, kColumns, this);
    m_table->setObjectName(QStringLiteral("serving_search_table"));
    m_table->setHorizontalHeaderLabels(
        { QStringLiteral("Deployment"), QStringLiteral("Tokens/s per GPU"), QStringLiteral("Tokens/s per user"),
            QStringLiteral("TTFT"), QStringLiteral("TPOT"), QStringLiteral("GPUs"), QStringLiteral("Pareto") });
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->verticalHeader()->setVisible(false);
    layout->addWidget(m_table, 1);
    connect(m_search, &QPushButton::clicked, this, [this] {
        if (m_running)
            emit cancel_requested();
        else
            emit search_requested();
    });
    connect(m_apply, &QPushButton::clicked, this, [this] { apply_row(m_table->currentRow()); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { apply_row(row); });
    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) { m_apply->setEnabled(row >= 0); });
}

void ServingSearchTable::set_running(bool running)
{
    m_running = running;
    m_search->setText(running ? QStringLiteral("Cancel search") : QStringLiteral("Search deployments"));
    if (running)
        m_summary->setText(QStringLiteral("Searching..."));
}

void ServingSearchTable::set_cancelled()
{
    set_running(false);
    m_summary->setText(QStringLiteral("The search was cancelled; the table keeps the last complete search."));
}

void ServingSearchTable::set_failed(const QString& error)
{
    set_running(false);
    m_summary->setText(QStringLiteral("The search failed: ") + error);
}

void ServingSearchTable::set_result(const ServingSearchResult& r)
{
    set_running(false);
    m_result = r;
    m_summary->setText(QStringLiteral("%1 deployments tried in %2 s: %3 fit and sustain the load, %4 meet the SLO.")
                           .arg(r.evaluated)
                           .arg(r.seconds, 0, 'f', 3)
                           .arg(r.feasible)
                           .arg(r.meet_slo));
    m_table->setRowCount(static_cast<int>(r.results.size()));
    for (int row = 0; row < static_cast<int>(r.results.size()); ++row) {
        const ServingCandidate& c = r.results[static_cast<std::size_t>(row)];
        const ServingPrediction& p = c.prediction;
        m_table->setItem(
            row, 0, new QTableWidgetItem(QString::fromStdString(deployment_label(c.deployment, p.replicas))));
        m_table->setItem(
            row, 1, number_item(p.output_tokens_per_s_per_gpu, format_count(p.output_tokens_per_s_per_gpu)));
        m_table->setItem(row, 2,
            number_item(p.output_tokens_per_s_per_user, QString::number(p.output_tokens_per_s_per_user, 'f', 1)));
        m_table->setItem(row, 3, number_item(p.ttft_ms, QString::number(p.ttft_ms, 'f', 1) + QStringLiteral(" ms")));
        m_table->setItem(row, 4, number_item(p.tpot_ms, QString::number(p.tpot_ms, 'f', 2) + QStringLiteral(" ms")));
        m_table->setItem(row, 5, number_item(static_cast<double>(p.gpus), QString::number(p.gpus)));
        m_table->setItem(row, 6, new QTableWidgetItem(c.pareto ? QStringLiteral("yes") : QString()));
    }
}

void ServingSearchTable::apply_row(int row)
{
    if (row < 0 || row >= static_cast<int>(m_result.results.size()))
        return;
    Deployment d = m_result.results[static_cast<std::size_t>(row)].deployment;
    if (!d.disaggregated)
        d.replicas = m_result.results[static_cast<std::size_t>(row)].prediction.replicas;
    emit apply_requested(d);
}

QString ServingSearchTable::summary() const
{
    return m_summary->text();
}

} // namespace parallax::views
