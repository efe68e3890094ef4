#include "planner/strategy_panel.hpp"

#include "planner/degree_slider.hpp"
#include "search/plan_explain.hpp"
#include "spec/framework_support.hpp"
#include "spec/strategy_label.hpp"
#include "style/icons.hpp"
#include "style/view_style.hpp"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString degree_label(Degree d)
{
    switch (d) {
    case Degree::tp:
        return QStringLiteral("TP");
    case Degree::pp:
        return QStringLiteral("PP");
    case Degree::dp:
        return QStringLiteral("DP");
    case Degree::cp:
        return QStringLiteral("CP");
    case Degree::ep:
        return QStringLiteral("EP");
    case Degree::vpp:
        return QStringLiteral("VPP");
    case Degree::micro_batch:
        return QStringLiteral("Micro-batch");
    }
    return {};
}

QString companions_text(const std::vector<CompanionChange>& notes)
{
    QStringList parts;
    for (const CompanionChange& c : notes)
        parts << qs(c.setting) + QStringLiteral(" ") + qs(c.from) + QStringLiteral(" → ") + qs(c.to)
                + QStringLiteral(" (") + qs(c.reason) + QStringLiteral(")");
    return parts.join(QStringLiteral("; "));
}

void set_item_enabled(QComboBox* box, int index, bool enabled, const QString& tip)
{
    auto* model = qobject_cast<QStandardItemModel*>(box->model());
    if (!model)
        return;
    QStandardItem* item = model->item(index);
    item->setEnabled(enabled);
    item->setToolTip(tip);
}

int index_of_data(QComboBox* box, int data)
{
    return box->findData(data);
}

constexpr const char* kRankOrders[]
    = { "tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-ep-cp-dp-pp", "tp-pp-cp-ep-dp", "cp-tp-ep-dp-pp" };

} // namespace

StrategyPanel::StrategyPanel(QWidget* parent)
    : QWidget(parent)
{
    build();
}

void StrategyPanel::build()
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    m_gpu_line = new QLabel(this);
    m_gpu_line->setObjectName(QStringLiteral("gpu_line"));
    m_gpu_line->setWordWrap(true);
    outer->addWidget(m_gpu_line);

    build_degree_rows(outer);
    m_violations = new QLabel(this);
    m_violations->setObjectName(QStringLiteral("violations"));
    m_violations->setWordWrap(true);
    m_violations->setTextFormat(Qt::RichText);
    m_violations->hide();
    outer->addWidget(m_violations);

    build_common_settings(outer);
    build_more_settings(outer);
    outer->addStretch(1);
    connect_common_settings();
    connect_more_settings();
    refresh_icons();
    refresh_tooltips();
}

// One row per degree: name, slider, value and, for the degrees that multiply the GPU count, the lock
// and absorb buttons.
void StrategyPanel::build_degree_rows(QVBoxLayout* outer)
{
    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(2);
    m_absorb_group = new QButtonGroup(this);
    m_absorb_group->setExclusive(true);
    for (Degree d : kAllDegrees) {
        Row& r = m_rows[static_cast<int>(d)];
        const int row = static_cast<int>(d);
        r.name = new QLabel(degree_label(d), this);
        r.slider = new DegreeSlider(this);
        r.slider->setObjectName(QStringLiteral("slider_") + qs(to_string(d)));
        r.value = new QLabel(this);
        r.value->setMinimumWidth(r.value->fontMetrics().horizontalAdvance(QStringLiteral("00000")));
        r.value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        QFont bold = r.value->font();
        bold.setBold(true);
        r.value->setFont(bold);
        grid->addWidget(r.name, row, 0);
        grid->addWidget(r.slider, row, 1);
        grid->addWidget(r.value, row, 2);
        connect(r.slider, &DegreeSlider::value_chosen, this, [this, d](int v, int drag) { degree_chosen(d, v, drag); });
        if (multiplies_gpus(d))
            build_lock_buttons(d, grid, row);
    }
    grid->setColumnStretch(1, 1);
    outer->addLayout(grid);
}

void StrategyPanel::build_lock_buttons(Degree d, QGridLayout* grid, int row)
{
    Row& r = m_rows[static_cast<int>(d)];
    r.lock = new QToolButton(this);
    r.lock->setCheckable(true);
    r.lock->setAutoRaise(true);
    r.lock->setObjectName(QStringLiteral("lock_") + qs(to_string(d)));
    r.lock->setToolTip(QStringLiteral("Lock %1: it keeps its value and never absorbs a change").arg(degree_label(d)));
    r.absorb = new QToolButton(this);
    r.absorb->setCheckable(true);
    r.absorb->setAutoRaise(true);
    r.absorb->setObjectName(QStringLiteral("absorb_") + qs(to_string(d)));
    r.absorb->setToolTip(
        QStringLiteral("%1 absorbs changes of the other degrees so the GPU count stays the same").arg(degree_label(d)));
    m_absorb_group->addButton(r.absorb, row);
    grid->addWidget(r.lock, row, 3);
    grid->addWidget(r.absorb, row, 4);
    connect(r.lock, &QToolButton::toggled, this, [this, d](bool on) {
        if (m_updating)
            return;
        m_options.locks.set(d, on);
        emit options_changed(m_options);
    });
    connect(r.absorb, &QToolButton::toggled, this, [this, d](bool on) {
        if (m_updating || !on)
            return;
        m_options.preferred_absorber = d;
        emit options_changed(m_options);
    });
}

// The settings every plan has: sequence parallel, recompute, ZeRO, schedule, offload, precision,
// framework.
void StrategyPanel::build_common_settings(QVBoxLayout* outer)
{
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_sp = new QCheckBox(QStringLiteral("Sequence parallel"), this);
    form->addRow(m_sp);
    m_recompute = new QComboBox(this);
    for (Recompute r : { Recompute::none, Recompute::selective, Recompute::full })
        m_recompute->addItem(qs(to_string(r)), static_cast<int>(r));
    m_recompute_modules = new QToolButton(this);
    m_recompute_modules->setPopupMode(QToolButton::InstantPopup);
    auto* modules = new QMenu(m_recompute_modules);
    for (int i = 0; i < kRecomputeModuleCount; ++i) {
        QAction* a = modules->addAction(qs(to_string(static_cast<RecomputeModule>(i))));
        a->setCheckable(true);
        a->setData(i);
    }
    m_recompute_modules->setMenu(modules);
    auto* recompute_row = new QHBoxLayout;
    recompute_row->addWidget(m_recompute, 1);
    recompute_row->addWidget(m_recompute_modules);
    form->addRow(QStringLiteral("Recompute"), recompute_row);
    m_zero = new QComboBox(this);
    m_zero->addItem(QStringLiteral("0 — plain DP"), 0);
    m_zero->addItem(QStringLiteral("1 — distributed optimizer"), 1);
    m_zero->addItem(QStringLiteral("2 — + gradients"), 2);
    m_zero->addItem(QStringLiteral("3 — + parameters (FSDP)"), 3);
    form->addRow(QStringLiteral("ZeRO"), m_zero);
    m_schedule = new QComboBox(this);
    for (Schedule s :
        { Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1, Schedule::dualpipe })
        m_schedule->addItem(qs(to_string(s)), static_cast<int>(s));
    form->addRow(QStringLiteral("Schedule"), m_schedule);
    m_offload = new QCheckBox(QStringLiteral("Offload optimizer to CPU"), this);
    m_offload->setObjectName(QStringLiteral("offload_optimizer"));
    form->addRow(m_offload);
    m_offload_activations = new QCheckBox(QStringLiteral("Offload activations to host"), this);
    m_offload_activations->setObjectName(QStringLiteral("offload_activations"));
    form->addRow(m_offload_activations);
    m_offload_params = new QCheckBox(QStringLiteral("Offload parameters (ZeRO-Infinity)"), this);
    m_offload_params->setObjectName(QStringLiteral("offload_params"));
    form->addRow(m_offload_params);
    m_ep_tile_overlap = new QCheckBox(QStringLiteral("EP tile-level overlap"), this);
    m_ep_tile_overlap->setObjectName(QStringLiteral("ep_tile_overlap"));
    form->addRow(m_ep_tile_overlap);
    m_precision = new QComboBox(this);
    for (Precision p : { Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp4 })
        m_precision->addItem(qs(to_string(p)), static_cast<int>(p));
    form->addRow(QStringLiteral("Precision"), m_precision);
    m_framework = new QComboBox(this);
    for (Framework f :
        { Framework::megatron, Framework::torchtitan, Framework::torchtitan_compile, Framework::megatron_deepspeed })
        m_framework->addItem(qs(to_string(f)), static_cast<int>(f));
    form->addRow(QStringLiteral("Framework"), m_framework);
    outer->addLayout(form);
}

// The collapsed "More settings" group.
void StrategyPanel::build_more_settings(QVBoxLayout* outer)
{
    m_more_button = new QToolButton(this);
    m_more_button->setObjectName(QStringLiteral("more_settings"));
    m_more_button->setText(QStringLiteral("More settings"));
    m_more_button->setCheckable(true);
    m_more_button->setAutoRaise(true);
    m_more_button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_more_button->setArrowType(Qt::RightArrow);
    outer->addWidget(m_more_button);
    m_more = new QGroupBox(this);
    auto* more = new QFormLayout(m_more);
    m_optimizer = new QComboBox(m_more);
    for (Optimizer o : { Optimizer::adam, Optimizer::adam8bit, Optimizer::sgd, Optimizer::lion })
        m_optimizer->addItem(qs(to_string(o)), static_cast<int>(o));
    more->addRow(QStringLiteral("Optimizer"), m_optimizer);
    m_cp_kind = new QComboBox(m_more);
    for (CpKind k : { CpKind::ring, CpKind::all_to_all })
        m_cp_kind->addItem(qs(to_string(k)), static_cast<int>(k));
    more->addRow(QStringLiteral("CP exchange"), m_cp_kind);
    m_tp_overlap = new QCheckBox(QStringLiteral("TP communication overlap"), m_more);
    more->addRow(m_tp_overlap);
    m_grad_overlap = new QCheckBox(QStringLiteral("Overlap gradient reduce"), m_more);
    more->addRow(m_grad_overlap);
    m_param_overlap = new QCheckBox(QStringLiteral("Overlap parameter gather"), m_more);
    more->addRow(m_param_overlap);
    m_ep_overlap = new QCheckBox(QStringLiteral("EP all-to-all overlap"), m_more);
    m_ep_overlap->setObjectName(QStringLiteral("ep_overlap"));
    more->addRow(m_ep_overlap);
    m_grad_release = new QCheckBox(QStringLiteral("Gradient release"), m_more);
    m_grad_release->setObjectName(QStringLiteral("gradient_release"));
    more->addRow(m_grad_release);
    m_rank_order = new QComboBox(m_more);
    m_rank_order->setEditable(true);
    m_rank_order->setInsertPolicy(QComboBox::NoInsert);
    for (const char* o : kRankOrders)
        m_rank_order->addItem(QString::fromLatin1(o));
    more->addRow(QStringLiteral("Rank order"), m_rank_order);
    m_expert_tp = new QSpinBox(m_more);
    m_expert_tp->setRange(0, 1024);
    m_expert_tp->setSpecialValueText(QStringLiteral("same as TP"));
    more->addRow(QStringLiteral("Expert TP"), m_expert_tp);
    m_first_layers = new QSpinBox(m_more);
    m_first_layers->setRange(0, 100000);
    m_first_layers->setSpecialValueText(QStringLiteral("even split"));
    more->addRow(QStringLiteral("First stage layers"), m_first_layers);
    m_last_layers = new QSpinBox(m_more);
    m_last_layers->setRange(0, 100000);
    m_last_layers->setSpecialValueText(QStringLiteral("even split"));
    more->addRow(QStringLiteral("Last stage layers"), m_last_layers);
    // Collapsed until asked for: the common knobs stay in view.
    m_more->setVisible(false);
    connect(m_more_button, &QToolButton::toggled, this, [this](bool open) {
        m_more->setVisible(open);
        m_more_button->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    });
    outer->addWidget(m_more);
}

void StrategyPanel::connect_common_settings()
{
    connect(m_sp, &QCheckBox::toggled, this, [this](bool on) {
        Strategy s = strategy();
        s.sequence_parallel = on;
        request(s, on ? QStringLiteral("Sequence parallel on") : QStringLiteral("Sequence parallel off"));
    });
    connect(m_recompute, &QComboBox::activated, this, [this](int i) {
        Strategy s = strategy();
        s.recompute = static_cast<Recompute>(m_recompute->itemData(i).toInt());
        request(s, QStringLiteral("Recompute ") + m_recompute->itemText(i));
    });
    connect(m_recompute_modules->menu(), &QMenu::triggered, this, [this](QAction* a) {
        Strategy s = strategy();
        const auto modules = static_cast<unsigned char>(
            s.recompute_modules ^ recompute_module_bit(static_cast<RecomputeModule>(a->data().toInt())));
        if (modules == 0) { // selective recomputation re-runs something: the last module stays
            a->setChecked(true);
            return;
        }
        s.recompute_modules = modules;
        request(s, (a->isChecked() ? QStringLiteral("Recompute ") : QStringLiteral("Keep ")) + a->text());
    });
    connect(m_zero, &QComboBox::activated, this, [this](int i) {
        Strategy s = strategy();
        s.zero = m_zero->itemData(i).toInt();
        if (s.zero == 0)
            s.offload_optimizer = false; // offload needs a sharded optimizer
        request(s, QStringLiteral("ZeRO ") + QString::number(s.zero));
    });
    connect(m_schedule, &QComboBox::activated, this, [this](int i) {
        const Schedule sched = static_cast<Schedule>(m_schedule->itemData(i).toInt());
        if (!m_scenario)
            return;
        const ToggleOption o = with_schedule(plan_inputs(*m_scenario), strategy(), sched);
        request(o.strategy, QStringLiteral("Schedule ") + m_schedule->itemText(i));
    });
    connect_toggle(m_offload, &Strategy::offload_optimizer, QStringLiteral("Optimizer offload"));
    connect_toggle(m_offload_activations, &Strategy::offload_activations, QStringLiteral("Activation offload"));
    connect_toggle(m_offload_params, &Strategy::offload_params, QStringLiteral("Parameter offload"));
    connect_toggle(m_ep_tile_overlap, &Strategy::ep_tile_overlap, QStringLiteral("EP tile overlap"));
    connect(m_precision, &QComboBox::activated, this, [this](int i) {
        TrainingSpec t = training();
        t.precision = static_cast<Precision>(m_precision->itemData(i).toInt());
        request_training(t, QStringLiteral("Precision ") + m_precision->itemText(i));
    });
    connect(m_framework, &QComboBox::activated, this, [this](int i) {
        TrainingSpec t = training();
        t.framework = static_cast<Framework>(m_framework->itemData(i).toInt());
        request_training(t, QStringLiteral("Framework ") + m_framework->itemText(i));
    });
}

// A check box that flips one switch of the strategy, as one undo step named "<name> on" / "<name> off".
void StrategyPanel::connect_toggle(QCheckBox* box, bool Strategy::*field, const QString& name)
{
    connect(box, &QCheckBox::toggled, this, [this, field, name](bool on) {
        Strategy s = strategy();
        s.*field = on;
        request(s, name + (on ? QStringLiteral(" on") : QStringLiteral(" off")));
    });
}

void StrategyPanel::connect_more_settings()
{
    connect(m_optimizer, &QComboBox::activated, this, [this](int i) {
        Strategy s = strategy();
        s.optimizer = static_cast<Optimizer>(m_optimizer->itemData(i).toInt());
        request(s, QStringLiteral("Optimizer ") + m_optimizer->itemText(i));
    });
    connect(m_cp_kind, &QComboBox::activated, this, [this](int i) {
        Strategy s = strategy();
        s.cp_kind = static_cast<CpKind>(m_cp_kind->itemData(i).toInt());
        request(s, QStringLiteral("CP exchange ") + m_cp_kind->itemText(i));
    });
    connect_toggle(m_tp_overlap, &Strategy::tp_comm_overlap, QStringLiteral("TP comm overlap"));
    connect_toggle(m_grad_overlap, &Strategy::overlap_grad_reduce, QStringLiteral("Overlap grad reduce"));
    connect_toggle(m_param_overlap, &Strategy::overlap_param_gather, QStringLiteral("Overlap param gather"));
    connect_toggle(m_ep_overlap, &Strategy::ep_overlap, QStringLiteral("EP overlap"));
    connect_toggle(m_grad_release, &Strategy::gradient_release, QStringLiteral("Gradient release"));
    connect(m_rank_order, &QComboBox::textActivated, this, [this](const QString& text) {
        RankOrder order;
        if (auto error = rank_order_from_string(text.toStdString(), order)) {
            m_rank_order->setToolTip(QString::fromStdString(*error));
            m_rank_order->setStyleSheet(
                QStringLiteral("QComboBox { color: %1; }").arg(bad_colour(is_dark(palette())).name()));
            return;
        }
        m_rank_order->setStyleSheet(QString());
        Strategy s = strategy();
        s.rank_order = order;
        request(s, QStringLiteral("Rank order ") + text);
    });
    auto int_field = [this](QSpinBox* box, int Strategy::*field, const QString& name) {
        connect(box, &QSpinBox::editingFinished, this, [this, box, field, name] {
            if (strategy().*field == box->value())
                return;
            Strategy s = strategy();
            s.*field = box->value();
            request(s, name + QStringLiteral(" ") + QString::number(box->value()));
        });
    };
    int_field(m_expert_tp, &Strategy::expert_tp, QStringLiteral("Expert TP"));
    int_field(m_first_layers, &Strategy::first_stage_layers, QStringLiteral("First stage layers"));
    int_field(m_last_layers, &Strategy::last_stage_layers, QStringLiteral("Last stage layers"));
}

void StrategyPanel::refresh_icons()
{
    const QColor c = palette().color(QPalette::Text);
    for (Row& r : m_rows) {
        if (r.lock)
            r.lock->setIcon(lock_icon(c));
        if (r.absorb)
            r.absorb->setIcon(absorb_icon(palette().color(QPalette::Highlight)));
    }
}

void StrategyPanel::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_icons();
    QWidget::changeEvent(e);
}

void StrategyPanel::set_scenario(const Scenario& s, const PlanEvaluationOptions& options)
{
    m_scenario = s;
    m_options = options;
    refresh();
}

void StrategyPanel::set_why(const QString& why)
{
    m_why = why;
    refresh_tooltips();
}

void StrategyPanel::refresh_tooltips()
{
    for (Degree d : kAllDegrees) {
        const Row& r = m_rows[static_cast<int>(d)];
        if (m_scenario && m_scenario->heterogeneous())
            continue; // disable_degree_row's tooltip says why they are still
        const QString html = explanation_html(explain_degree(d), m_why);
        r.name->setToolTip(html);
        r.slider->setToolTip(html);
    }
    auto tip = [this](QWidget* w, const char* key) {
        if (const Explanation* e = explain_toggle(key))
            w->setToolTip(explanation_html(*e, m_why));
    };
    tip(m_sp, "sequence_parallel");
    tip(m_recompute, "recompute");
    tip(m_zero, "zero");
    tip(m_schedule, "schedule");
    tip(m_offload, "offload_optimizer");
    tip(m_precision, "precision");
    tip(m_framework, "framework");
    tip(m_optimizer, "optimizer");
    tip(m_cp_kind, "cp_kind");
    tip(m_tp_overlap, "tp_comm_overlap");
    tip(m_grad_overlap, "overlap_grad_reduce");
    tip(m_param_overlap, "overlap_param_gather");
    tip(m_ep_overlap, "ep_overlap");
    tip(m_grad_release, "gradient_release");
}

void StrategyPanel::refresh()
{
    if (!m_scenario)
        return;
    m_updating = true;
    const PlanInputs in = plan_inputs(*m_scenario);
    const Strategy& st = m_scenario->strategy;
    const bool dark = is_dark(palette());
    m_gpu_line->setText(QStringLiteral("%1 GPUs = %2")
                            .arg(m_scenario->cluster.total_gpus())
                            .arg(QString::fromStdString(strategy_degrees_label(st))));

    // An explicit pipeline (strategy.stages) has no plain degrees to check or drag: the Stages panel
    // edits it, and the hetero rules come with its evaluation.
    const bool staged = m_scenario->heterogeneous();
    std::vector<Rule> broken = staged ? std::vector<Rule> {} : all_violations(in, st);
    QStringList broken_keys;
    for (Rule r : broken)
        broken_keys << QString::fromLatin1(rule_key(r, st));

    for (Degree d : kAllDegrees) {
        if (staged)
            disable_degree_row(d);
        else
            refresh_degree_row(d, in, broken_keys, dark);
    }
    if (staged)
        m_gpu_line->setText(QStringLiteral("%1 GPUs in %2 node groups, %3 pipeline stages")
                                .arg(m_scenario->cluster.total_gpus())
                                .arg(m_scenario->cluster.groups.size())
                                .arg(m_scenario->stages.size()));
    show_violations(broken, in, dark);
    refresh_settings(in, broken);
    m_updating = false;
}

// The degree's slider stops (each valid one with what it would change), value, lock and absorber.
void StrategyPanel::refresh_degree_row(Degree d, const PlanInputs& in, const QStringList& broken_keys, bool dark)
{
    const Strategy& st = m_scenario->strategy;
    Row& r = m_rows[static_cast<int>(d)];
    std::vector<SliderStop> stops;
    for (const DegreeOption& o : degree_options(in, st, d, m_options.preferred_absorber, m_options.locks)) {
        SliderStop stop;
        stop.value = o.value;
        stop.valid = o.valid();
        if (!o.valid()) {
            stop.tip = QString::fromStdString(o.why);
        } else if (o.value != degree_value(st, d)) {
            // "tp 4 -> 8, dp 2 -> 1" and why anything else had to follow.
            stop.tip = QString::fromStdString(describe_strategy_change(st, o.strategy));
            if (!o.companions.empty())
                stop.tip += QStringLiteral("; ") + companions_text(o.companions);
        }
        stops.push_back(std::move(stop));
    }
    r.slider->set_stops(std::move(stops), degree_value(st, d));
    r.value->setText(QString::number(degree_value(st, d)));
    const bool locked = multiplies_gpus(d) && m_options.locks.is_locked(d);
    r.slider->setEnabled(!locked);
    const bool bad = broken_keys.contains(QStringLiteral("strategy.") + qs(to_string(d)));
    r.name->setStyleSheet(
        bad ? QStringLiteral("color: %1; font-weight: bold;").arg(bad_colour(dark).name()) : QString());
    if (r.lock) {
        r.lock->setEnabled(true); // a plan given stage by stage disabled it
        r.lock->setChecked(locked);
        r.absorb->setChecked(m_options.preferred_absorber == d);
        r.absorb->setEnabled(!locked);
    }
}

// A plan given stage by stage: the sliders would rewrite degrees it does not have. They stay still, and
// say where its TP, PP and DP are edited instead.
void StrategyPanel::disable_degree_row(Degree d)
{
    Row& r = m_rows[static_cast<int>(d)];
    const QString why = QStringLiteral(
        "This plan gives its pipeline stage by stage (strategy.stages) on a mixed cluster: TP is set per replica, "
        "PP by the number of stages and DP by each stage's replicas. Edit them in the Stages panel.");
    r.slider->setEnabled(false);
    r.slider->setToolTip(why);
    r.name->setToolTip(why);
    r.name->setStyleSheet(QString());
    r.value->setText(QStringLiteral("—"));
    if (r.lock) {
        r.lock->setEnabled(false);
        r.absorb->setEnabled(false);
    }
}

void StrategyPanel::show_violations(const std::vector<Rule>& broken, const PlanInputs& in, bool dark)
{
    const Strategy& st = m_scenario->strategy;
    // What the plan breaks, with the rule in words (the handles cannot reach these states; edits of
    // the model, the cluster or a loaded file can).
    if (broken.empty()) {
        m_violations->hide();
    } else {
        QString html
            = QStringLiteral("<span style='color:%1'><b>This plan is not valid:</b>").arg(bad_colour(dark).name());
        for (Rule r : broken)
            html += QStringLiteral("<br>• <code>") + QString::fromLatin1(rule_key(r, st)) + QStringLiteral("</code>: ")
                + QString::fromStdString(explain(r, in, st)).toHtmlEscaped();
        html += QStringLiteral("</span>");
        m_violations->setText(html);
        m_violations->show();
    }
}

// The settings below the sliders, each option enabled only where the plan allows it.
void StrategyPanel::refresh_settings(const PlanInputs& in, const std::vector<Rule>& broken)
{
    const Strategy& st = m_scenario->strategy;
    m_sp->setChecked(st.sequence_parallel);
    m_recompute->setCurrentIndex(index_of_data(m_recompute, static_cast<int>(st.recompute)));
    refresh_recompute_modules(in);
    m_zero->setCurrentIndex(index_of_data(m_zero, st.zero));
    for (int i = 0; i < m_zero->count(); ++i) {
        Strategy t = st;
        t.zero = m_zero->itemData(i).toInt();
        const ToggleOption o = checked(in, t);
        const bool ok = o.rule == Rule::ok || o.rule == Rule::offload_needs_zero || !broken.empty();
        set_item_enabled(m_zero, i, ok, ok ? QString() : QString::fromStdString(o.why));
    }
    m_schedule->setCurrentIndex(index_of_data(m_schedule, static_cast<int>(st.schedule)));
    for (int i = 0; i < m_schedule->count(); ++i) {
        const Schedule sched = static_cast<Schedule>(m_schedule->itemData(i).toInt());
        const ToggleOption o = with_schedule(in, st, sched);
        const bool ok = o.rule == Rule::ok || sched == st.schedule;
        QString tip = ok ? companions_text(o.companions) : QString::fromStdString(o.why);
        set_item_enabled(m_schedule, i, ok, tip);
    }
    m_offload->setChecked(st.offload_optimizer);
    m_offload->setEnabled(st.zero >= 1 || st.offload_optimizer);
    refresh_offload_settings(in);
    m_precision->setCurrentIndex(index_of_data(m_precision, static_cast<int>(m_scenario->training.precision)));
    for (int i = 0; i < m_precision->count(); ++i) {
        const Precision p = static_cast<Precision>(m_precision->itemData(i).toInt());
        const bool ok = m_scenario->cluster.gpu.supports(p);
        set_item_enabled(m_precision, i, ok,
            ok ? QString()
               : QString::fromStdString(m_scenario->cluster.gpu.name) + QStringLiteral(" has no ") + qs(to_string(p))
                    + QStringLiteral(" tensor cores"));
    }
    m_framework->setCurrentIndex(index_of_data(m_framework, static_cast<int>(m_scenario->training.framework)));
    m_optimizer->setCurrentIndex(index_of_data(m_optimizer, static_cast<int>(st.optimizer)));
    m_cp_kind->setCurrentIndex(index_of_data(m_cp_kind, static_cast<int>(st.cp_kind)));
    m_tp_overlap->setChecked(st.tp_comm_overlap);
    m_grad_overlap->setChecked(st.overlap_grad_reduce);
    m_param_overlap->setChecked(st.overlap_param_gather);
    // A toggle that would break a rule stays reachable only to switch it off, with the rule as its tooltip.
    auto rule_gated = [&](QCheckBox* box, bool Strategy::*field, Rule rule) {
        box->setChecked(st.*field);
        Strategy on = st;
        on.*field = true;
        const bool allowed = rule_holds(rule, in, on);
        box->setEnabled(allowed || st.*field);
        if (!allowed)
            box->setToolTip(QString::fromStdString(explain(rule, in, on)));
    };
    rule_gated(m_ep_overlap, &Strategy::ep_overlap, Rule::ep_overlap_needs_moe);
    rule_gated(m_grad_release, &Strategy::gradient_release, Rule::gradient_release_accumulation);
    const QString order = QString::fromStdString(to_string(st.rank_order));
    if (m_rank_order->findText(order) < 0)
        m_rank_order->addItem(order);
    m_rank_order->setCurrentText(order);
    m_expert_tp->setValue(st.expert_tp);
    m_first_layers->setValue(st.first_stage_layers);
    m_last_layers->setValue(st.last_stage_layers);
}

// A toggle the plan cannot switch on stays reachable only to switch it off, with the rule as its tooltip.
// The module menu: what the plan recomputes, offered where Megatron's selective recomputation runs.
void StrategyPanel::refresh_recompute_modules(const PlanInputs& in)
{
    const Strategy& st = m_scenario->strategy;
    QStringList names;
    for (QAction* a : m_recompute_modules->menu()->actions()) {
        const bool on
            = (st.recompute_modules & recompute_module_bit(static_cast<RecomputeModule>(a->data().toInt()))) != 0;
        a->setChecked(on);
        if (on)
            names << a->text();
    }
    const bool megatron = in.training.framework == Framework::megatron;
    m_recompute_modules->setEnabled(st.recompute == Recompute::selective && megatron);
    m_recompute_modules->setText(
        names.size() == 1 ? names.front() : QString::number(names.size()) + QStringLiteral(" modules"));
    m_recompute_modules->setMinimumWidth(m_recompute_modules->sizeHint().width()); // the combo gives way
    m_recompute_modules->setToolTip(!megatron
            ? QString::fromStdString(explain(Rule::recompute_modules_megatron, in, st))
            : st.recompute != Recompute::selective
            ? QStringLiteral("The modules apply to selective recomputation")
            : QStringLiteral("Recomputed before the backward, their outputs not kept: ")
                + names.join(QStringLiteral(", ")));
}

void StrategyPanel::gate_toggle(QCheckBox* box, bool Strategy::*field, const char* key, const QString& why_not)
{
    const bool on = m_scenario->strategy.*field;
    box->setChecked(on);
    box->setEnabled(why_not.isEmpty() || on);
    if (!why_not.isEmpty())
        box->setToolTip(why_not);
    else if (const Explanation* e = explain_toggle(key))
        box->setToolTip(explanation_html(*e, m_why));
}

// Host offload of activations and parameters, and the EP tile overlap: each gated by the plan's rule
// and by what the scenario's framework runs (framework_support.hpp).
void StrategyPanel::refresh_offload_settings(const PlanInputs& in)
{
    const Strategy& st = m_scenario->strategy;
    const FrameworkRelease fw(m_scenario->training.framework);
    auto why_not = [&](bool Strategy::*field, const char* key, std::optional<Rule> rule, const QString& extra) {
        Strategy on = st;
        on.*field = true;
        if (rule && !rule_holds(*rule, in, on))
            return QString::fromStdString(explain(*rule, in, on));
        if (!extra.isEmpty())
            return extra;
        for (const Unsupported& u : unsupported_plan_features(fw, on, m_scenario->model))
            if (u.key == key)
                return QString::fromStdString(u.feature + ": " + u.reason);
        return QString();
    };
    gate_toggle(m_offload_activations, &Strategy::offload_activations, "offload_activations",
        why_not(&Strategy::offload_activations, "strategy.offload_activations", std::nullopt, QString()));
    gate_toggle(m_offload_params, &Strategy::offload_params, "offload_params",
        why_not(&Strategy::offload_params, "strategy.offload_params", Rule::offload_params_needs_zero3, QString()));
    const bool moe_ep = m_scenario->model.is_moe() && st.ep > 1;
    gate_toggle(m_ep_tile_overlap, &Strategy::ep_tile_overlap, "ep_tile_overlap",
        why_not(&Strategy::ep_tile_overlap, "strategy.ep_tile_overlap", std::nullopt,
            moe_ep ? QString()
                   : QStringLiteral("tile-level overlap of the expert all-to-all needs an MoE model with EP > 1")));
}

void StrategyPanel::degree_chosen(Degree d, int value, int drag)
{
    if (m_updating || !m_scenario)
        return;
    const PlanInputs in = plan_inputs(*m_scenario);
    const std::optional<DegreeOption> o = change_degree(
        in, m_scenario->strategy, d, value, pick_absorber(d, m_options.preferred_absorber, m_options.locks));
    if (!o || !o->valid())
        return; // the slider offers valid stops only; a stale stop is ignored
    Scenario next = *m_scenario;
    next.strategy = o->strategy;
    QString what = degree_label(d) + QStringLiteral(" ") + QString::number(degree_value(m_scenario->strategy, d))
        + QStringLiteral(" → ") + QString::number(value);
    emit edit_requested(next, what, drag);
}

void StrategyPanel::request(const Strategy& s, const QString& what)
{
    if (m_updating || !m_scenario || s == m_scenario->strategy)
        return;
    Scenario next = *m_scenario;
    next.strategy = s;
    emit edit_requested(next, what, 0);
}

void StrategyPanel::request_training(const TrainingSpec& t, const QString& what)
{
    if (m_updating || !m_scenario)
        return;
    Scenario next = *m_scenario;
    next.training = t;
    emit edit_requested(next, what, 0);
}

} // namespace parallax::views
