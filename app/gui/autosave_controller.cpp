#include "gui/autosave_controller.hpp"

#include "gui/plan_document.hpp"
#include "gui/settings.hpp"
#include "spec/strategy_rules.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QTimer>

#include <algorithm>

namespace parallax::app {

AutosaveController::AutosaveController(Settings* settings, PlanDocument* doc, bool enabled, QObject* parent)
    : QObject(parent)
    , m_settings(settings)
    , m_doc(doc)
{
    if (!enabled)
        return;
    m_autosave = new Autosave(m_settings->autosave_dir(), this);
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, [this] { write_now(); });
    connect(m_doc, &PlanDocument::modified_changed, this, &AutosaveController::schedule);
}

void AutosaveController::schedule()
{
    if (!m_timer || !m_doc->modified() || m_timer->isActive())
        return;
    m_timer->start(std::max(1, m_settings->autosave_interval_s()) * 1000);
}

bool AutosaveController::write_now(QString* error)
{
    const std::optional<Scenario>& s = m_doc->scenario();
    if (!m_autosave || !s)
        return false;
    if (check_strategy(plan_inputs(*s), s->strategy) != Rule::ok) {
        if (error)
            *error = QStringLiteral("the plan breaks a rule; the last valid autosave is kept");
        return false;
    }
    return m_autosave->write(*s, m_doc->path(), m_doc->label(), error);
}

void AutosaveController::discard()
{
    if (m_autosave)
        m_autosave->discard();
}

QString AutosaveController::file_path() const
{
    return m_autosave ? m_autosave->file_path() : QString();
}

void AutosaveController::abandon()
{
    if (m_autosave)
        m_autosave->abandon();
}

QStringList AutosaveController::orphans() const
{
    return Autosave::orphans(m_settings->autosave_dir());
}

RecoveredScenario AutosaveController::recover(const QString& file)
{
    RecoveredScenario r = Autosave::load(file);
    const QString label = (r.label.isEmpty() ? QStringLiteral("Recovered") : r.label) + QStringLiteral(" (recovered)");
    m_doc->reset_modified(r.scenario, r.original_path, label);
    Autosave::remove(file);
    write_now();
    return r;
}

} // namespace parallax::app
