#include "planner/stage_table.hpp"

#include "planner/stage_bar.hpp"
#include "spec/hetero_label.hpp"
#include "style/view_style.hpp"
#include "viewdata/stage_edits.hpp"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
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
    m_bar = new StageBar(this);
    v->addWidget(m_bar);
    connect(m_bar, &StageBar::boundary_moved, this, &StageTable::move_boundary);
    m_table = new QTableWidget(0, column_count, this);
    m_table->setObjectName(QStringLiteral("stage_table"));
    m_table->setHorizontalHeaderLabels({ QStringLiteral("Stage"), QStringLiteral("Edit"), QStringLiteral("Layers"),
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
    v->addWidget(add_controls());
    set_evaluation(nullptr);
}

QWidget* StageTable::add_controls()
{
    m_add_row = new QWidget(this);
    auto* h = new QHBoxLayout(m_add_row);
    h->setContentsMargins(0, 0, 0, 0);
    m_add_group = new QComboBox(m_add_row);
    m_add_group->setObjectName(QStringLiteral("add_group"));
    m_add_tp = new QComboBox(m_add_row);
    m_add_tp->setObjectName(QStringLiteral("add_tp"));
    auto* add = new QPushButton(QStringLiteral("Add stage"), m_add_row);
    add->setObjectName(QStringLiteral("add_stage"));
    add->setToolTip(QStringLiteral("A new last stage of one replica on this group and TP; it takes layers from the "
                                   "fullest stages"));
    connect(m_add_group, &QComboBox::currentIndexChanged, this, [this] {
        const int tp = m_add_tp->currentData().toInt();
        m_add_tp->clear();
        if (const Scenario* base = edit_base())
            for (int choice : replica_tp_choices(*base, m_add_group->currentText().toStdString()))
                m_add_tp->addItem(QString::number(choice), choice);
        m_add_tp->setCurrentIndex(std::max(0, m_add_tp->findData(tp)));
    });
    connect(add, &QPushButton::clicked, this,
        [this] { add_stage(m_add_group->currentText(), m_add_tp->currentData().toInt()); });
    m_refusal = new QLabel(m_add_row);
    m_refusal->setObjectName(QStringLiteral("stage_refusal"));
    m_refusal->setWordWrap(true);
    h->addWidget(new QLabel(QStringLiteral("New stage or replica on"), m_add_row));
    h->addWidget(m_add_group);
    h->addWidget(new QLabel(QStringLiteral("TP"), m_add_row));
    h->addWidget(m_add_tp);
    h->addWidget(add);
    h->addWidget(m_refusal, 1);
    return m_add_row;
}

void StageTable::set_scenario(const Scenario& s)
{
    m_scenario = s;
    refresh_add_controls();
    refresh_bar();
}

void StageTable::refresh_add_controls()
{
    const Scenario* base = edit_base();
    m_add_row->setVisible(base && base->heterogeneous());
    QStringList names;
    if (base)
        for (const NodeGroup& g : base->cluster.groups)
            names << qs(g.name);
    QStringList shown;
    for (int i = 0; i < m_add_group->count(); ++i)
        shown << m_add_group->itemText(i);
    if (names != shown) {
        const QString current = m_add_group->currentText();
        m_add_group->clear();
        m_add_group->addItems(names);
        m_add_group->setCurrentIndex(std::max(0, m_add_group->findText(current)));
    }
}

// The document's stages (edits land there first); the pacing stage from the evaluation when it is of them.
void StageTable::refresh_bar()
{
    const Scenario* base = edit_base();
    std::vector<int> layers;
    QStringList labels;
    if (base)
        for (const PipelineStageSpec& st : base->stages) {
            layers.push_back(st.layers);
            labels << qs(stage_replicas_label(st));
        }
    int critical = -1;
    for (const StageRow& r : m_rows)
        if (r.critical && r.stage < static_cast<int>(layers.size()))
            critical = r.stage;
    m_bar->setVisible(layers.size() > 1);
    if (!m_bar->dragging() || m_bar->layers().size() != layers.size())
        m_bar->set_stages(layers, labels, critical);
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
                                       "neighbouring stage, as does dragging a boundary in the bar; a replica's TP "
                                       "is chosen in its row. Ctrl+Z undoes."));
    rebuild();
    refresh_add_controls();
    refresh_bar();
}

void StageTable::rebuild()
{
    const bool dark = is_dark(palette());
    m_table->clearContents();
    m_table->setRowCount(static_cast<int>(m_rows.size()));
    for (int r = 0; r < static_cast<int>(m_rows.size()); ++r)
        fill_row(r, m_rows[static_cast<std::size_t>(r)], dark);
    // Resizing to contents sees items, not the editors in the cells: widen those columns to fit them.
    for (int column : { move, replicas, edit }) {
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
    item(edit, QString());
    m_table->setCellWidget(r, edit, stage_editors(row));
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
        auto* remove = new QToolButton(w);
        remove->setText(QStringLiteral("×"));
        remove->setObjectName(QStringLiteral("remove_replica_%1_%2").arg(row.stage).arg(i));
        remove->setToolTip(QStringLiteral("Remove this replica"));
        connect(remove, &QToolButton::clicked, this, [this, stage = row.stage, i] { remove_replica(stage, i); });
        h->addWidget(label);
        h->addWidget(tp);
        h->addWidget(remove);
        h->addSpacing(8);
    }
    h->addStretch(1);
    return w;
}

QWidget* StageTable::stage_editors(const StageRow& row)
{
    auto* w = new QWidget(m_table);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(2, 0, 2, 0);
    auto* add = new QToolButton(w);
    add->setText(QStringLiteral("+ replica"));
    add->setObjectName(QStringLiteral("add_replica_%1").arg(row.stage));
    add->setToolTip(QStringLiteral("Add a replica on the group and TP chosen below the table"));
    connect(add, &QToolButton::clicked, this,
        [this, stage = row.stage] { add_replica(stage, m_add_group->currentText(), m_add_tp->currentData().toInt()); });
    // The row's last replica, so that removing one needs no scroll to the replica editors (their × removes any).
    auto* remove_last = new QToolButton(w);
    remove_last->setText(QStringLiteral("− replica"));
    remove_last->setObjectName(QStringLiteral("remove_last_replica_%1").arg(row.stage));
    const int last = static_cast<int>(row.replicas.size()) - 1;
    remove_last->setToolTip(last > 0 ? QStringLiteral("Remove this stage's last replica")
                                     : QStringLiteral("A stage keeps at least one replica: remove the stage instead"));
    remove_last->setEnabled(last > 0);
    connect(remove_last, &QToolButton::clicked, this, [this, stage = row.stage, last] { remove_replica(stage, last); });
    auto* remove = new QToolButton(w);
    remove->setText(QStringLiteral("Remove stage"));
    remove->setObjectName(QStringLiteral("remove_stage_%1").arg(row.stage));
    remove->setToolTip(QStringLiteral("Remove this stage; its layers go to its neighbours"));
    connect(remove, &QToolButton::clicked, this, [this, stage = row.stage] { remove_stage(stage); });
    h->addWidget(add);
    h->addWidget(remove_last);
    h->addWidget(remove);
    return w;
}

QString StageTable::refusal_text() const
{
    return m_refusal->text();
}

bool StageTable::emit_edit(const StageEdit& e, const QString& what)
{
    if (!e.scenario) {
        m_refusal->setText(QStringLiteral("<span style='color:%1'>Not done: %2</span>")
                               .arg(bad_colour(is_dark(palette())).name(), qs(e.refusal).toHtmlEscaped()));
        return false;
    }
    m_refusal->clear();
    emit edit_requested(*e.scenario, what, 0);
    return true;
}

void StageTable::move_boundary(int boundary, int first_layer, int drag)
{
    const Scenario* base = edit_base();
    if (!base)
        return;
    if (const std::optional<Scenario> s = with_stage_boundary(*base, boundary, first_layer))
        emit edit_requested(
            *s, QStringLiteral("drag the boundary of stages %1 and %2").arg(boundary).arg(boundary + 1), drag);
}

bool StageTable::add_stage(const QString& group, int tp)
{
    const Scenario* base = edit_base();
    return base
        && emit_edit(parallax::add_stage(*base, group.toStdString(), tp),
            QStringLiteral("add a stage on %1 TP %2").arg(group).arg(tp));
}

bool StageTable::remove_stage(int stage)
{
    const Scenario* base = edit_base();
    return base && emit_edit(parallax::remove_stage(*base, stage), QStringLiteral("remove stage %1").arg(stage));
}

bool StageTable::add_replica(int stage, const QString& group, int tp)
{
    const Scenario* base = edit_base();
    return base
        && emit_edit(parallax::add_replica(*base, stage, group.toStdString(), tp),
            QStringLiteral("add a replica on %1 TP %2 to stage %3").arg(group).arg(tp).arg(stage));
}

bool StageTable::remove_replica(int stage, int replica)
{
    const Scenario* base = edit_base();
    return base
        && emit_edit(parallax::remove_replica(*base, stage, replica),
            QStringLiteral("remove replica %1 of stage %2").arg(replica).arg(stage));
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
