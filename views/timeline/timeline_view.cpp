#include "timeline/timeline_view.hpp"

#include "io/chrome_trace.hpp"
#include "spec/input_error.hpp"

#include <QAction>
#include <QActionGroup>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPainter>
#include <QStackedWidget>
#include <QSvgGenerator>
#include <QToolBar>
#include <QVBoxLayout>

namespace parallax::views {

TimelineView::TimelineView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_toolbar = new QToolBar(this);
    m_toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_summary = new SummaryStrip(this);
    m_stack = new QStackedWidget(this);
    m_timeline = new TimelineCanvas(m_stack);
    m_dag = new DagCanvas(m_stack);
    m_stack->addWidget(m_timeline);
    m_stack->addWidget(m_dag);
    layout->addWidget(m_toolbar);
    layout->addWidget(m_summary);
    layout->addWidget(m_stack, 1);
    m_power = new PowerStrip(m_timeline, this);
    layout->addWidget(m_power);

    auto* modes = new QActionGroup(this);
    m_mode_timeline = m_toolbar->addAction(tr("Timeline"), this, [this] { set_mode(Mode::timeline); });
    m_mode_dag = m_toolbar->addAction(tr("DAG"), this, [this] { set_mode(Mode::dag); });
    for (QAction* a : { m_mode_timeline, m_mode_dag }) {
        a->setCheckable(true);
        modes->addAction(a);
    }
    m_mode_timeline->setChecked(true);
    m_mode_dag->setToolTip(
        tr("Dependency graph per stage x micro-batch chunk; double-click a pass to expand it into layers"));
    m_toolbar->addSeparator();
    m_toolbar->addAction(tr("Fit"), this, [this] { fit(); })->setToolTip(tr("Whole step (F, Home)"));
    m_toolbar->addAction(tr("Zoom in"), this, [this] {
        if (m_mode == Mode::dag)
            m_dag->zoom(1.5);
        else
            m_timeline->zoom(1.5);
    });
    m_toolbar->addAction(tr("Zoom out"), this, [this] {
        if (m_mode == Mode::dag)
            m_dag->zoom(1 / 1.5);
        else
            m_timeline->zoom(1 / 1.5);
    });
    m_toolbar->addSeparator();
    QAction* comm = m_toolbar->addAction(tr("Communication rows"));
    comm->setCheckable(true);
    comm->setChecked(true);
    connect(comm, &QAction::toggled, this, [this](bool on) { m_timeline->set_show_communication_rows(on); });
    QAction* crit = m_toolbar->addAction(tr("Critical path"));
    crit->setCheckable(true);
    crit->setChecked(true);
    connect(crit, &QAction::toggled, this, [this](bool on) { m_timeline->set_show_critical_path(on); });
    m_power_action = m_toolbar->addAction(tr("Power"));
    m_power_action->setCheckable(true);
    m_power_action->setChecked(true);
    m_power_action->setToolTip(tr("Power per GPU over the step, per pipeline stage, on the timeline's time axis"));
    connect(m_power_action, &QAction::toggled, this, [this](bool on) { set_show_power(on); });
    m_toolbar->addSeparator();
    m_compare = m_toolbar->addAction(tr("Pin as A"));
    m_compare->setCheckable(true);
    m_compare->setToolTip(tr("Keep this plan as A and compare the next plan (B) with it on one time axis"));
    connect(m_compare, &QAction::triggered, this, [this](bool on) {
        if (on)
            pin_current_as_baseline();
        else
            clear_comparison();
    });
    m_toolbar->addAction(tr("Measured trace…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Measured trace"), QString(),
            tr("Chrome / Perfetto trace (*.json *.trace *.pt.trace.json);;All files (*)"));
        if (path.isEmpty())
            return;
        QString why;
        if (!load_measured_trace(path, &why))
            QMessageBox::warning(this, tr("Measured trace"), why);
    });
    m_toolbar->addSeparator();
    m_toolbar->addAction(tr("PNG…"), this, [this] { export_dialog(QStringLiteral("png")); });
    m_toolbar->addAction(tr("SVG…"), this, [this] { export_dialog(QStringLiteral("svg")); });
    m_toolbar->addAction(tr("Chrome trace…"), this, [this] { export_dialog(QStringLiteral("json")); });
    connect(m_timeline, &TimelineCanvas::selection_changed, this, [this] {
        if (auto op = m_timeline->selected_op(); op && !m_timeline->baseline())
            m_dag->select_op(*op);
    });
}

void TimelineView::set_simulation(const SimulatedPlan& sim, const Prediction& prediction, const TimelinePlanInfo& info)
{
    set_simulation(std::make_shared<const SimulatedPlan>(sim), prediction, info);
}

void TimelineView::set_simulation(
    std::shared_ptr<const SimulatedPlan> sim, const Prediction& prediction, const TimelinePlanInfo& info)
{
    set_timeline_data(build_timeline_data(std::move(sim), prediction, info));
}

void TimelineView::set_timeline_data(std::shared_ptr<const TimelineData> data)
{
    m_timeline->set_data(data);
    m_dag->set_data(data);
    m_power->set_data(data);
    refresh_summary();
    emit plan_changed();
}

void TimelineView::clear()
{
    m_timeline->set_baseline(nullptr);
    m_timeline->set_data(nullptr);
    m_dag->set_data(nullptr);
    m_power->set_data(nullptr);
    m_compare->setChecked(false);
    refresh_summary();
}

void TimelineView::set_comparison(const SimulatedPlan& a, const Prediction& prediction_a, const TimelinePlanInfo& info)
{
    set_comparison(build_timeline_data(std::make_shared<const SimulatedPlan>(a), prediction_a, info));
}

void TimelineView::set_comparison(std::shared_ptr<const TimelineData> a)
{
    m_timeline->set_baseline(std::move(a));
    m_compare->setChecked(m_timeline->baseline() != nullptr);
    refresh_summary();
}

void TimelineView::pin_current_as_baseline()
{
    set_comparison(m_timeline->data());
}

void TimelineView::clear_comparison()
{
    set_comparison(std::shared_ptr<const TimelineData> {});
}

bool TimelineView::load_measured_trace(const QString& path, QString* error)
{
    try {
        auto trace = std::make_shared<const MeasuredTrace>(parallax::load_measured_trace(path.toStdString()));
        m_timeline->set_measured(std::move(trace), 0);
        refresh_summary();
        return true;
    } catch (const InputError& e) {
        const QString why = QString::fromStdString(e.what());
        if (error)
            *error = why;
        emit this->error(why);
        return false;
    }
}

void TimelineView::set_measured_trace(std::shared_ptr<const MeasuredTrace> trace)
{
    m_timeline->set_measured(std::move(trace), 0);
    refresh_summary();
}

void TimelineView::clear_measured_trace()
{
    m_timeline->set_measured(nullptr);
    refresh_summary();
}

void TimelineView::set_measured_offset(double seconds)
{
    m_timeline->set_measured_offset(seconds);
}

void TimelineView::set_show_power(bool on)
{
    m_power->setVisible(on && m_mode == Mode::timeline);
    if (m_power_action->isChecked() != on)
        m_power_action->setChecked(on);
}

void TimelineView::set_mode(Mode mode)
{
    m_mode = mode;
    m_power->setVisible(mode == Mode::timeline && m_power_action->isChecked());
    m_stack->setCurrentWidget(mode == Mode::dag ? static_cast<QWidget*>(m_dag) : m_timeline);
    (mode == Mode::dag ? m_mode_dag : m_mode_timeline)->setChecked(true);
}

void TimelineView::fit()
{
    if (m_mode == Mode::dag)
        m_dag->fit();
    else
        m_timeline->fit();
}

void TimelineView::refresh_summary()
{
    m_summary->set_plans(m_timeline->data(), m_timeline->baseline());
    m_summary->set_legend(m_timeline->kinds_shown());
}

QImage TimelineView::render_image()
{
    QImage image(size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter p(&image);
    render(&p);
    return image;
}

bool TimelineView::export_png(const QString& path, QString* error)
{
    const QImage image = render_image();
    if (image.save(path, "PNG"))
        return true;
    if (error)
        *error = tr("%1: cannot write the PNG file").arg(path);
    return false;
}

bool TimelineView::export_svg(const QString& path, QString* error)
{
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(size());
    gen.setViewBox(QRect(QPoint(0, 0), size()));
    gen.setTitle(QStringLiteral("Parallax timeline"));
    QPainter p;
    if (!p.begin(&gen)) {
        if (error)
            *error = tr("%1: cannot write the SVG file").arg(path);
        return false;
    }
    render(&p);
    p.end();
    if (!QFileInfo(path).exists() || QFileInfo(path).size() == 0) {
        if (error)
            *error = tr("%1: cannot write the SVG file").arg(path);
        return false;
    }
    return true;
}

bool TimelineView::export_chrome_trace(const QString& path, QString* error)
{
    const auto d = m_timeline->data();
    if (!d) {
        if (error)
            *error = tr("no plan to export");
        return false;
    }
    try {
        write_chrome_trace(
            *d->sim, d->info.title.empty() ? std::string("parallax plan") : d->info.title, path.toStdString());
        return true;
    } catch (const InputError& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

void TimelineView::export_dialog(const QString& kind)
{
    const QString filter = kind == QStringLiteral("png") ? tr("PNG image (*.png)")
        : kind == QStringLiteral("svg")                  ? tr("SVG image (*.svg)")
                                                         : tr("Chrome trace (*.json)");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export"), QStringLiteral("timeline.") + kind, filter);
    if (path.isEmpty())
        return;
    QString why;
    const bool ok = kind == QStringLiteral("png") ? export_png(path, &why)
        : kind == QStringLiteral("svg")           ? export_svg(path, &why)
                                                  : export_chrome_trace(path, &why);
    if (!ok)
        QMessageBox::warning(this, tr("Export"), why);
}

} // namespace parallax::views
