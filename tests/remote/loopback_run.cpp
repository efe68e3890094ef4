#include "loopback_run.hpp"

#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"

#include <QFile>

namespace parallax::test {

using namespace parallax::remote;

QString state_text(const QVariant& arg)
{
    return QLatin1String(to_string(arg.value<RunState>()));
}

QByteArray read_file(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

ClusterProfile loopback_slurm_profile(
    const LocalSshServer& ssh, const LocalSlurm& slurm, const QString& dir, const QString& name)
{
    ClusterProfile p;
    p.name = str(name);
    p.host = "127.0.0.1";
    p.port = ssh.port();
    p.user = str(ssh.user());
    p.key_file = str(ssh.client_key());
    p.known_hosts = str(dir + QStringLiteral("/known_hosts"));
    p.use_agent = false;
    p.launcher = LauncherKind::slurm;
    p.partition = "debug";
    p.time_limit = "00:10:00";
    p.work_dir = str(dir + QStringLiteral("/cluster-home/parallax-runs"));
    p.env["SLURM_CONF"] = str(slurm.conf());
    p.gpu_type = "cpu";
    p.cpus_per_task = 1;
    p.poll_min_s = 0.3;
    p.poll_max_s = 1.0;
    p.keepalive_s = 2;
    return p;
}

RunRequest tiny_probe_request(int steps, const ClusterProfile& p)
{
    RunRequest req;
    req.scenario = load_scenario_file(
        PARALLAX_SOURCE_DIR "/tests/remote/data/tiny_probe_scenario.json", PresetCatalog::standard());
    req.scenario_label = "tiny_probe_scenario.json";
    req.profile = p;
    req.framework = JobFramework::probe;
    req.steps = steps;
    req.probe_microbatches = 2;
    return req;
}

RunRecorder::RunRecorder(RemoteRunner& r)
    : created(&r, &RemoteRunner::run_created)
    , dispatched(&r, &RemoteRunner::dispatched)
    , dispatch_failed(&r, &RemoteRunner::dispatch_failed)
    , states(&r, &RemoteRunner::run_state_changed)
    , logs(&r, &RemoteRunner::log_appended)
    , measurements(&r, &RemoteRunner::measurements_updated)
    , finished(&r, &RemoteRunner::run_finished)
    , errors(&r, &RemoteRunner::run_error)
    , connection(&r, &RemoteRunner::connection_state_changed)
{
}

bool RunRecorder::saw_state(const QString& state) const
{
    for (const auto& args : states)
        if (state_text(args.at(1)) == state)
            return true;
    return false;
}

bool RunRecorder::saw_detail(const QString& part) const
{
    for (const auto& args : states)
        if (args.at(2).toString().contains(part))
            return true;
    return false;
}

bool RunRecorder::saw_connection(const QString& state) const
{
    for (const auto& args : connection)
        if (args.at(1).toString() == state)
            return true;
    return false;
}

QString RunRecorder::problems() const
{
    QString out;
    for (const auto& a : dispatch_failed)
        out += QStringLiteral("dispatch_failed: ") + a.at(0).toString() + QLatin1Char('\n');
    for (const auto& a : errors)
        out += QStringLiteral("run_error: ") + a.at(1).toString() + QLatin1Char('\n');
    for (const auto& a : states)
        out += QStringLiteral("state: ") + state_text(a.at(1)) + QStringLiteral(": ") + a.at(2).toString()
            + QLatin1Char('\n');
    return out;
}

} // namespace parallax::test
