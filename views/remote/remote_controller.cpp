#include "remote/remote_controller.hpp"

#include "async/when_alive.hpp"
#include "io/scenario_io.hpp"
#include "remote/ssh_dialogs.hpp"
#include "runs/remote_runner.hpp"
#include "runs/run_catalog.hpp"
#include "spec/input_error.hpp"
#include "ssh/prompt_bridge.hpp"

#include <QAction>
#include <QDir>
#include <QEventLoop>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace parallax::views {

namespace {

using remote::RunCatalog;

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// At most this many runs in the table (newest first) and compared in the overlay at once.
constexpr int kMaxRuns = 500;
constexpr int kMaxCompared = 6;
// The log pane starts with the end of a long log; later bytes stream in.
constexpr std::size_t kLogTailBytes = 2u << 20;
constexpr std::size_t kLogChunkBytes = 8u << 20;
// Coalescing: a burst of runner signals (a poll emits several) becomes one read of the store.
constexpr int kReloadDelayMs = 120;
constexpr int kLogDelayMs = 100;

struct RowsResult {
    std::vector<RunRow> rows;
    QString error;
};

struct OverlayResult {
    std::vector<std::shared_ptr<const remote::RunOverlay>> overlays;
    QString error;
};

struct LogResult {
    remote::LogSlice slice;
    QString error;
};

std::string plan_json(const Scenario& s)
{
    Scenario sent = s;
    sent.dp_derived = false; // as RunEngine stores it
    return nlohmann::json(scenario_to_json(sent)).dump();
}

} // namespace

RemoteRunsController::RemoteRunsController(const Options& options, QWidget* window)
    : QObject(window)
    , m_opts(options)
    , m_window(window)
{
    setObjectName(QStringLiteral("remote_runs_controller"));
    if (m_opts.store_path.isEmpty())
        m_opts.store_path = RunCatalog::default_store_path();
    if (m_opts.trace_dir.isEmpty())
        m_opts.trace_dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/traces");
    m_bridge = std::make_shared<remote::PromptBridge>();
    m_runner = std::make_unique<remote::RemoteRunner>(m_opts.store_path, m_bridge);
    m_panel = new RunsPanel(window);

    m_reload_timer = new QTimer(this);
    m_reload_timer->setSingleShot(true);
    m_reload_timer->setInterval(kReloadDelayMs);
    connect(m_reload_timer, &QTimer::timeout, this, [this] {
        m_reload_pending = false;
        load_rows();
    });
    m_overlay_timer = new QTimer(this);
    m_overlay_timer->setSingleShot(true);
    m_overlay_timer->setInterval(kReloadDelayMs);
    connect(m_overlay_timer, &QTimer::timeout, this, &RemoteRunsController::load_overlays);
    m_log_timer = new QTimer(this);
    m_log_timer->setSingleShot(true);
    m_log_timer->setInterval(kLogDelayMs);
    connect(m_log_timer, &QTimer::timeout, this, [this] { load_log(false); });

    connect(m_panel->send_action(), &QAction::triggered, this, [this] { open_dispatch_dialog(); });
    connect(m_panel->profiles_action(), &QAction::triggered, this, [this] { open_profile_editor(); });
    connect(m_panel->refresh_action(), &QAction::triggered, this, &RemoteRunsController::reload);
    connect(m_panel->cancel_action(), &QAction::triggered, this, [this] {
        if (!m_selected.isEmpty())
            request_cancel(m_selected.front());
    });
    connect(m_panel->attach_action(), &QAction::triggered, this, [this] {
        if (!m_selected.isEmpty())
            attach(m_selected.front());
    });
    connect(m_panel->trace_action(), &QAction::triggered, this, [this] {
        if (!m_selected.isEmpty())
            fetch_trace(m_selected.front());
    });
    connect(m_panel, &RunsPanel::selection_changed, this, &RemoteRunsController::selection_changed);
    connect_runner();
    connect_prompts();
    m_panel->set_status(QStringLiteral("Run store: ") + m_opts.store_path);
}

RemoteRunsController::~RemoteRunsController()
{
    shutdown();
}

void RemoteRunsController::shutdown()
{
    if (m_shut)
        return;
    m_shut = true;
    m_rows_request.cancel_all();
    m_overlay_request.cancel_all();
    m_log_request.cancel_all();
    m_runner->disconnect(this);
    m_runner->shutdown();
}

// ---------------------------------------------------------------------------------------------
// The runner and the SSH questions

void RemoteRunsController::connect_runner()
{
    remote::RemoteRunner* r = m_runner.get();
    connect(r, &remote::RemoteRunner::run_created, this, [this](const QString& id) {
        status(QStringLiteral("Run %1 stored; uploading its files").arg(id));
        reload();
        // The new run is what the user wants to look at.
        QTimer::singleShot(kReloadDelayMs * 3, this, [this, id] {
            if (m_panel && m_selected.isEmpty())
                m_panel->select_run(id);
        });
    });
    connect(r, &remote::RemoteRunner::dispatched, this, [this](const QString& id, const QString& description) {
        status(QStringLiteral("Run %1 sent: %2").arg(id, description));
        reload();
    });
    connect(r, &remote::RemoteRunner::dispatch_failed, this, [this](const QString& message) {
        const bool refused = !m_last_refusal_host.isEmpty() && message.contains(m_last_refusal_host);
        m_last_refusal_host.clear();
        status(QStringLiteral("Could not send the run: ") + message, true);
        Q_EMIT dispatch_failed(message);
        if (!refused && m_window) {
            // The refusal box already explained a host-key refusal; anything else is said here.
            auto* box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Could not send the run"),
                QStringLiteral("The run was not sent."), QMessageBox::Close, m_window);
            box->setObjectName(QStringLiteral("dispatch_failed"));
            box->setTextFormat(Qt::PlainText); // the message quotes the server (stderr, banners)
            box->setInformativeText(message);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->setWindowModality(Qt::WindowModal);
            box->open();
        }
    });
    connect(r, &remote::RemoteRunner::run_state_changed, this,
        [this](const QString& id, remote::RunState state, const QString& detail) {
            if (m_panel)
                m_panel->model()->set_state(id, state, detail);
            reload();
            if (m_selected.contains(id))
                schedule_overlay();
        });
    connect(r, &remote::RemoteRunner::log_appended, this, [this](const QString& id, const QByteArray&) {
        // The bytes are in the store already; the pane reads from its own offset, so nothing shows twice.
        if (id == m_log_run && !m_log_timer->isActive())
            m_log_timer->start();
    });
    connect(r, &remote::RemoteRunner::measurements_updated, this, [this](const QString& id) {
        reload();
        if (m_selected.contains(id))
            schedule_overlay();
    });
    connect(r, &remote::RemoteRunner::run_finished, this,
        [this](const QString& id, remote::RunState state, const QString& detail) {
            if (m_dispatch_clock.contains(id) && !m_dispatch_to_finished.contains(id))
                m_dispatch_to_finished.insert(id, m_dispatch_clock.value(id).elapsed() / 1000.0);
            QString text = QStringLiteral("Run %1 %2: %3").arg(id, QLatin1String(remote::to_string(state)), detail);
            if (m_dispatch_to_finished.contains(id))
                text += QStringLiteral(" (%1 s from sending to the stored result)")
                            .arg(m_dispatch_to_finished.value(id), 0, 'f', 1);
            status(text, state == remote::RunState::failed);
            reload();
            if (m_selected.contains(id))
                schedule_overlay();
            if (id == m_log_run)
                m_log_timer->start();
            Q_EMIT run_finished(id, state);
        });
    connect(r, &remote::RemoteRunner::run_error, this, [this](const QString& id, const QString& message) {
        status((id.isEmpty() ? QString() : QStringLiteral("Run %1: ").arg(id)) + message, true);
        reload();
    });
    connect(r, &remote::RemoteRunner::connection_state_changed, this,
        [this](const QString& host, const QString& state, const QString& message) {
            if (state == QLatin1String("connected") || state == QLatin1String("disconnected"))
                Q_EMIT status_message(QStringLiteral("%1: %2").arg(host, message));
            else
                status(QStringLiteral("Connection %1 %2: %3").arg(host, state, message),
                    state != QLatin1String("connected"));
        });
    connect(r, &remote::RemoteRunner::traces_fetched, this, &RemoteRunsController::show_fetched_traces);
}

// Loads the fetched trace off the GUI thread and hands it to the timeline.
void RemoteRunsController::show_fetched_traces(
    const QString& id, const QStringList& paths, const QString& message, const QString& error)
{
    --m_inflight;
    if (!error.isEmpty()) {
        status(QStringLiteral("Run %1: no trace: %2").arg(id, error), true);
        Q_EMIT trace_failed(error);
        return;
    }
    if (paths.isEmpty()) {
        status(QStringLiteral("Run %1: %2").arg(id, message));
        Q_EMIT trace_failed(message);
        return;
    }
    // Rank 0's trace when there are several (the others stay in the folder for the timeline's Open).
    QString path = paths.front();
    for (const QString& p : paths)
        if (p.contains(QLatin1String("rank0")) || p.contains(QLatin1String("rank_0")))
            path = p;
    status(QStringLiteral("Run %1: %2; drawing %3 on the timeline").arg(id, message, path));
    ++m_inflight;
    QtConcurrent::run([path]() -> std::pair<std::shared_ptr<const MeasuredTrace>, QString> {
        try {
            return { std::make_shared<const MeasuredTrace>(load_measured_trace(path.toStdString())), QString() };
        } catch (const std::exception& e) {
            return { nullptr, QString::fromStdString(e.what()) };
        }
    }).then(qApp, when_alive(this, [this, id, path](const std::pair<std::shared_ptr<const MeasuredTrace>, QString>& r) {
        --m_inflight;
        if (!r.first) {
            status(r.second, true);
            Q_EMIT trace_failed(r.second);
            return;
        }
        Q_EMIT trace_loaded(r.first, id, path);
    }));
}

void RemoteRunsController::connect_prompts()
{
    remote::PromptBridge* b = m_bridge.get();
    connect(b, &remote::PromptBridge::host_key_question, this,
        [this](quint64 id, const QString& host, const QString& type, const QString& fp, const QString& text) {
            auto* d = new HostKeyDialog(host, type, fp, text, m_window);
            d->setAttribute(Qt::WA_DeleteOnClose);
            connect(d, &QDialog::finished, this,
                [this, id](int r) { m_bridge->answer_host_key(id, r == QDialog::Accepted); });
            status(QStringLiteral("%1: unknown host key %2 — check and answer the question").arg(host, fp));
            d->open();
        });
    connect(b, &remote::PromptBridge::passphrase_requested, this, [this](quint64 id, const QString& key_file) {
        auto* d = new SecretPromptDialog(QStringLiteral("Key passphrase"),
            QStringLiteral("The key %1 is encrypted.").arg(key_file), { QStringLiteral("Passphrase:") }, { false },
            m_window);
        d->setAttribute(Qt::WA_DeleteOnClose);
        connect(d, &QDialog::finished, this, [this, id, d](int r) {
            const bool given = r == QDialog::Accepted;
            const QStringList a = given ? d->take_answers() : QStringList();
            m_bridge->answer_passphrase(id, a.value(0), given);
        });
        d->open();
    });
    connect(b, &remote::PromptBridge::prompts_requested, this,
        [this](quint64 id, const QString& target, const QString& name, const QString& instruction,
            const QStringList& prompts, const QList<bool>& echo) {
            const QString title = name.isEmpty() ? QStringLiteral("Sign in to ") + target : name;
            auto* d = new SecretPromptDialog(title,
                instruction.isEmpty() ? QStringLiteral("%1 asks:").arg(target) : instruction, prompts, echo, m_window);
            d->setAttribute(Qt::WA_DeleteOnClose);
            connect(d, &QDialog::finished, this, [this, id, d](int r) {
                const bool given = r == QDialog::Accepted;
                m_bridge->answer_prompts(id, given ? d->take_answers() : QStringList(), given);
            });
            d->open();
        });
    connect(b, &remote::PromptBridge::host_key_refusal, this,
        [this](const QString& host, const QString& type, const QString& fp, const QStringList& known, bool changed,
            const QString& text) {
            m_last_refusal_host = host;
            status(QStringLiteral("%1: host key refused (%2)")
                       .arg(host, changed ? QStringLiteral("it changed") : QStringLiteral("unexpected type")),
                true);
            if (m_window)
                host_key_refused_box(host, type, fp, known, changed, text, m_window)->open();
        });
}

// ---------------------------------------------------------------------------------------------
// Plan, dialogs, requests

void RemoteRunsController::set_plan(const Scenario& s, const QString& label)
{
    m_plan = s;
    m_plan_label = label;
    m_plan_json.reset(); // made when a run's plan is compared with it (not on every step of a drag)
    update_plan_overlay();
}

void RemoteRunsController::start(bool attach_unfinished)
{
    load_rows();
    if (attach_unfinished)
        // After the window is up: attach_active reads the (local) store to know each run's host.
        QTimer::singleShot(0, this, [this] {
            if (m_shut || !RunCatalog::store_exists(m_opts.store_path))
                return; // no store yet: nothing was ever sent from here
            const int n = m_runner->attach_active();
            if (n > 0)
                status(QStringLiteral("Watching %1 unfinished run(s) again").arg(n));
        });
}

DispatchDialog* RemoteRunsController::open_dispatch_dialog()
{
    if (!m_plan) {
        status(QStringLiteral("Open a plan first"), true);
        return nullptr;
    }
    auto* d = new DispatchDialog(*m_plan, m_plan_label, m_opts.profiles_file, m_window);
    d->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_last_profile.isEmpty())
        d->set_profile(m_last_profile);
    if (m_last_framework >= 0)
        d->set_framework(static_cast<remote::JobFramework>(m_last_framework));
    connect(d, &DispatchDialog::send_requested, this, [this, d] { dispatch(d->request()); });
    connect(d, &DispatchDialog::edit_profiles_requested, this, [this, d] {
        ProfileEditorDialog* e = open_profile_editor();
        const QPointer<DispatchDialog> dp(d);
        connect(e, &ProfileEditorDialog::profiles_changed, d, [dp] {
            if (dp)
                dp->reload_profiles();
        });
    });
    d->open();
    return d;
}

ProfileEditorDialog* RemoteRunsController::open_profile_editor()
{
    auto* e = new ProfileEditorDialog(m_opts.profiles_file, m_window);
    e->set_interactive(m_opts.interactive);
    e->setAttribute(Qt::WA_DeleteOnClose);
    e->open();
    return e;
}

void RemoteRunsController::dispatch(remote::RunRequest request)
{
    if (request.run_id.empty())
        request.run_id = remote::new_run_id();
    const QString id = qs(request.run_id);
    m_dispatch_clock[id].start();
    m_last_profile = qs(request.profile.name);
    m_last_framework = static_cast<int>(request.framework);
    Q_EMIT sending(id);
    status(QStringLiteral("Sending run %1 to %2 (%3)...")
               .arg(id, qs(request.profile.name), qs(std::string(remote::to_string(request.framework)))));
    m_runner->dispatch(std::move(request));
}

void RemoteRunsController::request_cancel(const QString& run_id)
{
    const RunRow* r = m_panel ? m_panel->model()->find(run_id) : nullptr;
    const QString where = r
        ? QStringLiteral("on '%1' (%2%3)")
              .arg(r->cluster, r->launcher, r->job_id.isEmpty() ? QString() : QStringLiteral(", job ") + r->job_id)
        : QString();
    auto* box = new QMessageBox(QMessageBox::Question, QStringLiteral("Cancel run?"),
        QStringLiteral("Cancel run %1 %2?").arg(run_id, where), QMessageBox::NoButton, m_window);
    box->setObjectName(QStringLiteral("cancel_confirmation"));
    box->setInformativeText(r && r->launcher == QLatin1String("direct")
            ? QStringLiteral("Its processes get SIGTERM on every host. What was logged so far stays in the run store.")
            : QStringLiteral(
                "SLURM is asked to stop the job (scancel). What was logged so far stays in the run store."));
    QPushButton* yes = box->addButton(QStringLiteral("Cancel the run"), QMessageBox::DestructiveRole);
    yes->setObjectName(QStringLiteral("confirm_cancel"));
    QPushButton* no = box->addButton(QStringLiteral("Keep it running"), QMessageBox::RejectRole);
    no->setObjectName(QStringLiteral("keep_running"));
    box->setDefaultButton(no);
    box->setEscapeButton(no);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    connect(box, &QMessageBox::finished, this, [this, box, yes, run_id] {
        if (box->clickedButton() != yes)
            return;
        status(QStringLiteral("Cancelling run %1...").arg(run_id));
        m_runner->cancel(run_id);
        Q_EMIT cancel_requested(run_id);
    });
    box->open();
}

void RemoteRunsController::attach(const QString& run_id)
{
    status(QStringLiteral("Watching run %1 again").arg(run_id));
    m_runner->attach(run_id);
}

void RemoteRunsController::fetch_trace(const QString& run_id)
{
    ++m_inflight;
    const QString dir = m_opts.trace_dir + QLatin1Char('/') + run_id;
    status(QStringLiteral("Looking for traces of run %1 on the cluster...").arg(run_id));
    m_runner->fetch_traces(run_id, dir);
}

std::optional<double> RemoteRunsController::dispatch_to_finished_s(const QString& run_id) const
{
    if (!m_dispatch_to_finished.contains(run_id))
        return std::nullopt;
    return m_dispatch_to_finished.value(run_id);
}

void RemoteRunsController::status(const QString& text, bool error)
{
    if (m_panel)
        m_panel->set_status(text, error);
    Q_EMIT status_message(text);
}

// ---------------------------------------------------------------------------------------------
// Background reads of the store

void RemoteRunsController::reload()
{
    m_reload_pending = true;
    if (!m_reload_timer->isActive())
        m_reload_timer->start();
}

void RemoteRunsController::load_rows()
{
    const LatestRequest::Ticket ticket = m_rows_request.next();
    ++m_inflight;
    const QString path = m_opts.store_path;
    QtConcurrent::run([path]() {
        RowsResult out;
        if (!RunCatalog::store_exists(path))
            return out;
        try {
            out.rows = RunCatalog(path).rows(kMaxRuns);
        } catch (const std::exception& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    }).then(qApp, when_alive(this, [this, id = ticket.id](const RowsResult& r) {
        --m_inflight;
        if (!m_rows_request.is_latest(id) || !m_panel)
            return; // a newer read is on its way
        if (!r.error.isEmpty()) {
            status(r.error, true);
            return;
        }
        m_panel->model()->set_rows(r.rows);
        Q_EMIT rows_loaded();
    }));
}

void RemoteRunsController::selection_changed(const QStringList& ids)
{
    m_selected = ids.mid(0, kMaxCompared);
    if (m_selected.value(0) != m_log_run) {
        m_log_run = m_selected.value(0);
        load_log(true);
    }
    load_overlays();
}

void RemoteRunsController::schedule_overlay()
{
    if (!m_overlay_timer->isActive())
        m_overlay_timer->start();
}

void RemoteRunsController::load_overlays()
{
    const LatestRequest::Ticket ticket = m_overlay_request.next();
    const QStringList ids = m_selected;
    if (ids.isEmpty()) {
        m_overlays.clear();
        m_overlays_changed = true;
        if (m_panel)
            m_panel->overlay_view()->clear();
        update_plan_overlay();
        return;
    }
    ++m_inflight;
    const QString path = m_opts.store_path;
    QtConcurrent::run([path, ids, cancel = ticket.token]() {
        OverlayResult out;
        try {
            const RunCatalog catalog(path);
            for (const QString& id : ids) {
                if (cancel.cancelled())
                    break; // a newer selection wants its own overlays
                if (auto overlay = catalog.overlay(id.toStdString()))
                    out.overlays.push_back(std::make_shared<const remote::RunOverlay>(std::move(*overlay)));
            }
        } catch (const std::exception& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    }).then(qApp, when_alive(this, [this, id = ticket.id](const OverlayResult& r) {
        --m_inflight;
        if (!m_overlay_request.is_latest(id) || !m_panel)
            return;
        if (!r.error.isEmpty())
            status(r.error, true);
        m_overlays = r.overlays;
        m_overlays_changed = true;
        m_panel->overlay_view()->set_overlays(m_overlays);
        update_plan_overlay();
    }));
}

void RemoteRunsController::update_plan_overlay()
{
    std::shared_ptr<const remote::RunOverlay> next;
    if (!m_overlays.empty() && m_plan) {
        const auto& o = m_overlays.front();
        // Only a run of this very plan, compared with the plan's own prediction: the probe trains a reduced
        // workload and CPU ranks compare with nothing, so neither belongs on the plan's numbers.
        if (o->comparison.prediction_source == "plan") {
            if (!m_plan_json) {
                try {
                    m_plan_json = plan_json(*m_plan);
                } catch (const std::exception&) {
                    m_plan_json.emplace(); // a plan that cannot be written out matches no run
                }
            }
            const nlohmann::json sent = nlohmann::json::parse(o->scenario_json, nullptr, false);
            if (!sent.is_discarded() && !m_plan_json->empty() && sent.dump() == *m_plan_json)
                next = o;
        }
    }
    const bool changed = next != m_plan_overlay;
    m_plan_overlay = next;
    if (changed || m_overlays_changed)
        Q_EMIT overlay_changed();
    m_overlays_changed = false;
}

void RemoteRunsController::load_log(bool from_start)
{
    if (from_start) {
        m_log_ticket = m_log_request.next();
        m_log_offset = 0;
        m_log_more = false;
        m_log_reading = false;
        if (m_log_run.isEmpty()) {
            if (m_panel)
                m_panel->set_log(QString(), QString(), false);
            return;
        }
    } else if (m_log_reading) {
        m_log_more = true; // read again when this read is back
        return;
    }
    if (m_log_run.isEmpty())
        return;
    const std::uint64_t request_id = m_log_ticket.id;
    const QString path = m_opts.store_path;
    const QString id = m_log_run;
    const qint64 offset = m_log_offset;
    m_log_reading = true;
    ++m_inflight;
    QtConcurrent::run([path, id, offset, from_start]() {
        LogResult out;
        try {
            const RunCatalog catalog(path);
            out.slice = from_start ? catalog.log_tail(id.toStdString(), kLogTailBytes)
                                   : catalog.log_from(id.toStdString(), offset, kLogChunkBytes);
        } catch (const std::exception& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    }).then(qApp, when_alive(this, [this, request_id, id, from_start](const LogResult& r) {
        --m_inflight;
        if (!m_log_request.is_latest(request_id) || !m_panel)
            return;
        m_log_reading = false;
        if (!r.error.isEmpty()) {
            status(r.error, true);
            return;
        }
        const std::string& bytes = r.slice.text;
        const QString text = QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
        if (from_start)
            m_panel->set_log(id, text, r.slice.truncated);
        else
            m_panel->append_log(id, text);
        m_log_offset = r.slice.from_byte + static_cast<qint64>(bytes.size());
        if (m_log_more || bytes.size() >= kLogChunkBytes) {
            m_log_more = false;
            load_log(false);
        }
    }));
}

bool RemoteRunsController::wait_until_idle(int timeout_ms)
{
    QElapsedTimer clock;
    clock.start();
    while (!idle() || m_overlay_timer->isActive() || m_log_timer->isActive()) {
        if (clock.elapsed() > timeout_ms)
            return false;
        QEventLoop loop;
        QTimer::singleShot(10, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

} // namespace parallax::views
