#include "planner/stage_table.hpp"

#include "spec/hetero_label.hpp"
#include "style/view_style.hpp"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// The pacing stage's row: a tint of the highlight colour, readable in light and dark palettes.
QColor critical_tint(const QPalette& p)
{
    QColor c = p.color(QPalette::Highlight);
    c.setAlpha(60);
    return c;
}

} // namespace

StageTable::StageTable(QWidget* parent)
    : QWidget(parent)
{
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("stage_note"));
    m_note->setWordWrap(true);
    v->addWidget(m_note);
    m_table = new QTableWidget(0, column_count, this);
    m_table->setObjectName(QStringLiteral("stage_table"));
    m_table->setHorizontalHeaderLabels({ QStringLiteral("Stage"), QStringLiteral("Layers"),
        QStringLiteral("Micro-batch"), QStringLiteral("Busy"), QStringLiteral("Memory per GPU"),
        QStringLiteral("Move a layer"), QStringLiteral("Replicas: group (GPU) TP") });
    m_table->verticalHeader()->hide();
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeaderItem(microbatch)
        ->setToolTip(QStringLiteral("Forward and backward of one micro-batch on the stage's slowest replica"));
    m_table->horizontalHeaderItem(busy)->setToolTip(
        QStringLiteral("The busiest replica's share of the step (its micro-batches × its micro-batch time)"));
    m_table->horizontalHeaderItem(memory)->setToolTip(
        QStringLiteral("Memory per GPU of the stage's fullest replica, against its GPU's capacity"));
    v->addWidget(m_table, 1);
    set_evaluation(nullptr);
}

void StageTable::set_evaluation(std::shared_ptr<const PlanEvaluation> e)
{
    m_evaluation = std::move(e);
    m_rows.clear();
    if (m_evaluation && m_evaluation->hetero)
        m_rows = stage_rows(m_evaluation->scenario, *m_evaluation->hetero);
    if (!m_evaluation || !m_evaluation->scenario.heterogeneous())
        m_note->setText(QStringLiteral("This plan has uniform stages (one GPU type): the Strategy panel's PP slider "
                                       "and the cluster grid set them. Open a scenario with cluster.groups and "
                                       "strategy.stages to edit a mixed-GPU pipeline here."));
    else if (!m_evaluation->valid)
        m_note->setText(
            QStringLiteral("<span style='color:%1'><b>Not a valid plan:</b> <code>%2</code>: %3</span>")
                .arg(bad_colour(is_dark(palette())).name(), qs(m_evaluation->violations.front().key).toHtmlEscaped(),
                    qs(m_evaluation->violations.front().message).toHtmlEscaped()));
    else
        m_note->setText(QStringLiteral("The highlighted stage paces the pipeline. ◀ and ▶ move one layer to the "
                                       "neighbouring stage; a replica's TP is chosen in its row. Ctrl+Z undoes."));
    rebuild();
}

void StageTable::rebuild()
{
    const bool dark = is_dark(palette());
    m_table->clearContents();
    m_table->setRowCount(static_cast<int>(m_rows.size()));
    for (int r = 0; r < static_cast<int>(m_rows.size()); ++r)
        fill_row(r, m_rows[static_cast<std::size_t>(r)], dark);
    // Resizing to contents sees items, not the editors in the cells: widen those columns to fit them.
    for (int column : { move, replicas }) {
        int widest = 0;
        for (int r = 0; r < m_table->rowCount(); ++r)
            if (const QWidget* w = m_table->cellWidget(r, column))
                widest = std::max(widest, w->sizeHint().width());
        m_table->horizontalHeader()->setSectionResizeMode(column, QHeaderView::Interactive);
        m_table->setColumnWidth(column, std::max(widest, m_table->horizontalHeader()->sectionSizeHint(column)));
    }
    m_table->resizeRowsToContents();
}

void StageTable::fill_row(int r, const StageRow& row, bool dark)
{
    auto item = [&](int column, const QString& text, const QString& tip = QString()) {
        auto* it = new QTableWidgetItem(text);
        it->setToolTip(tip);
        if (row.critical) {
            it->setBackground(critical_tint(palette()));
            QFont f = it->font();
            f.setBold(true);
            it->setFont(f);
        }
        m_table->setItem(r, column, it);
        return it;
    };
    item(stage, QString::number(row.stage) + (row.critical ? QStringLiteral(" (pacing)") : QString()),
        row.critical ? QStringLiteral("This stage's busiest replica paces the pipeline") : QString());
    item(layers, QStringLiteral("%1 (L%2–%3)").arg(row.layers).arg(row.first_layer).arg(row.last_layer()));
    item(move, QString());
    m_table->setCellWidget(r, move, move_buttons(row));
    item(replicas, QString());
    m_table->setCellWidget(r, replicas, replica_editors(row));
    item(microbatch, format_seconds(row.microbatch_s));
    item(busy, QStringLiteral("%1 (%2%)").arg(format_seconds(row.busy_s)).arg(std::lround(row.busy_share * 100)));
    QTableWidgetItem* mem
        = item(memory, QStringLiteral("%1 / %2").arg(format_gib(row.memory_bytes), format_gib(row.capacity_bytes)),
            row.fits ? QString() : QStringLiteral("A replica of this stage does not fit its GPU"));
    if (!row.fits)
        mem->setForeground(bad_colour(dark));
}

QWidget* StageTable::move_buttons(const StageRow& row)
{
    auto* w = new QWidget(m_table);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(2, 0, 2, 0);
    const int last = static_cast<int>(m_rows.size()) - 1;
    auto button = [&](const QString& text, const QString& name, const QString& tip, int to) {
        auto* b = new QToolButton(w);
        b->setText(text);
        b->setObjectName(name);
        b->setToolTip(tip);
        b->setEnabled(to >= 0 && to <= last && row.layers > 1);
        connect(b, &QToolButton::clicked, this, [this, from = row.stage, to] { move_layer(from, to); });
        h->addWidget(b);
    };
    button(QStringLiteral("◀ 1 layer"), QStringLiteral("move_left_%1").arg(row.stage),
        QStringLiteral("Move this stage's first layer to stage %1").arg(row.stage - 1), row.stage - 1);
    button(QStringLiteral("1 layer ▶"), QStringLiteral("move_right_%1").arg(row.stage),
        QStringLiteral("Move this stage's last layer to stage %1").arg(row.stage + 1), row.stage + 1);
    return w;
}

QWidget* StageTable::replica_editors(const StageRow& row)
{
    auto* w = new QWidget(m_table);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(2, 0, 2, 0);
    for (int i = 0; i < static_cast<int>(row.replicas.size()); ++i) {
        const StageReplicaCell& cell = row.replicas[static_cast<std::size_t>(i)];
        auto* label = new QLabel(QStringLiteral("%1 (%2) TP").arg(qs(cell.group), qs(gpu_short_name(cell.gpu))), w);
        label->setToolTip(
            QStringLiteral("%1: %2 micro-batches, busy %3, %4 of %5 per GPU")
                .arg(qs(cell.gpu))
                .arg(cell.microbatches)
                .arg(format_seconds(cell.busy_s), format_gib(cell.memory_bytes), format_gib(cell.capacity_bytes)));
        auto* tp = new QComboBox(w);
        tp->setObjectName(QStringLiteral("tp_%1_%2").arg(row.stage).arg(i));
        for (int choice : replica_tp_choices(m_evaluation->scenario, cell.group))
            tp->addItem(QString::number(choice), choice);
        tp->setCurrentIndex(tp->findData(cell.tp));
        connect(tp, &QComboBox::activated, this,
            [this, tp, stage = row.stage, i](int) { set_replica_tp(stage, i, tp->currentData().toInt()); });
        h->addWidget(label);
        h->addWidget(tp);
        h->addSpacing(8);
    }
    h->addStretch(1);
    return w;
}

const Scenario* StageTable::edit_base() const
{
    if (m_scenario)
        return &*m_scenario;
    return m_evaluation ? &m_evaluation->scenario : nullptr;
}

void StageTable::move_layer(int from, int to)
{
    const Scenario* base = edit_base();
    if (!base)
        return;
    if (const std::optional<Scenario> s = move_stage_layers(*base, from, to))
        emit edit_requested(*s, QStringLiteral("move a layer from stage %1 to stage %2").arg(from).arg(to), 0);
}

void StageTable::set_replica_tp(int stage, int replica, int tp)
{
    const Scenario* base = edit_base();
    if (!base)
        return;
    if (const std::optional<Scenario> s = with_replica_tp(*base, stage, replica, tp))
        emit edit_requested(*s, QStringLiteral("stage %1 replica %2 TP %3").arg(stage).arg(replica).arg(tp), 0);
}

void StageTable::changeEvent(QEvent* e)
{
    QWidget::changeEvent(e);
    if (e->type() == QEvent::PaletteChange)
        rebuild();
}

} // namespace parallax::views
