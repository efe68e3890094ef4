#include "io/chrome_trace.hpp"

#include "spec/input_error.hpp"
#include "viewdata/comm_companions.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

namespace parallax {

namespace {

constexpr double kMicroseconds = 1e6;

// Track ids inside a stage's process.
int track_of(IrStream s)
{
    switch (s) {
    case IrStream::compute:
        return 0;
    case IrStream::tp:
        return 1;
    case IrStream::cp:
        return 2;
    case IrStream::ep:
        return 3;
    case IrStream::pp:
        return 4;
    case IrStream::dp:
    case IrStream::dp_gather:
        return 5;
    case IrStream::sync:
        return 6;
    }
    return 7;
}

const char* track_name(int track)
{
    static const char* names[]
        = { "compute", "TP collectives", "CP exchange", "EP all-to-all", "PP send/recv", "DP reduce / gather", "sync" };
    return track >= 0 && track < 7 ? names[track] : "other";
}

using Json = nlohmann::json;

// Trace times are microseconds; a nanosecond is finer than any op, and rounding keeps numbers short.
double us(double seconds)
{
    return std::round(seconds * kMicroseconds * 1000) / 1000;
}

// Perfetto draws a counter track per (pid, name); a few thousand samples per stage is plenty to see
// the power follow the passes without making the file grow with every op.
constexpr int kPowerSamplesPerStage = 2000;

Json metadata(const char* name, int pid, Json args, std::optional<int> tid = {})
{
    Json e { { "ph", "M" }, { "name", name }, { "pid", pid }, { "args", std::move(args) } };
    if (tid)
        e["tid"] = *tid;
    return e;
}

std::string op_name(const SimulatedPlan& sim, std::uint32_t i, int& first, int& last)
{
    const ExecutionGraph& g = sim.lowered.graph;
    const int chunk = g.chunk(i);
    first = -1;
    last = -1;
    if (chunk >= 0 && chunk < static_cast<int>(sim.lowered.chunk_timing.size())) {
        const ChunkTiming& ct = sim.lowered.chunk_timing[chunk];
        first = ct.first_layer;
        last = ct.first_layer + ct.layers - 1;
    }
    return g.label(i, first, last);
}

template <typename Emit> void emit_metadata(const SimulatedPlan& sim, const std::string& title, Emit&& emit)
{
    const ExecutionGraph& g = sim.lowered.graph;
    Json whole { { "name", title + " (whole step)" } };
    if (sim.window.extrapolated())
        whole["note"] = "a window of " + std::to_string(sim.window.simulated_microbatches) + " of the step's "
            + std::to_string(sim.window.step_microbatches) + " micro-batches is shown; the step time is extrapolated";
    emit(metadata("process_name", g.devices, std::move(whole)));
    for (int d = 0; d < g.devices; ++d) {
        // A heterogeneous plan's stages name the GPUs they run on.
        const std::string hardware = d < static_cast<int>(sim.device_labels.size())
            ? " (" + sim.device_labels[static_cast<std::size_t>(d)] + ")"
            : std::string();
        emit(metadata("process_name", d, { { "name", "stage " + std::to_string(d) + hardware } }));
        emit(metadata("process_sort_index", d, { { "sort_index", d } }));
        for (int t = 0; t < 7; ++t)
            emit(metadata("thread_name", d, { { "name", track_name(t) } }, t));
    }
}

template <typename Emit> void emit_ops(const SimulatedPlan& sim, Emit&& emit)
{
    const ExecutionGraph& g = sim.lowered.graph;
    const SimulationResult& r = sim.result;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
        const IrOpType type = g.type(i);
        if (type == IrOpType::barrier)
            continue;
        int first = 0, last = 0;
        const double ts = us(r.start_s[i]);
        emit(Json { { "ph", "X" }, { "name", op_name(sim, i, first, last) }, { "cat", to_string(type) },
            { "pid", g.device(i) }, { "tid", track_of(g.stream(i)) }, { "ts", ts }, { "dur", us(g.duration_s(i)) },
            { "args",
                { { "op", i }, { "microbatch", g.microbatch(i) }, { "chunk", g.chunk(i) },
                    { "bytes", static_cast<double>(g.bytes(i)) } } } });
        // The collectives that run under a compute pass, on their own tracks (their busy time per
        // micro-batch; the exposed part is inside the pass).
        CommCompanion comms[kMaxCommCompanions];
        const int n = comm_companions(sim.lowered, i, comms);
        for (int k = 0; k < n; ++k) {
            const CommCompanion& c = comms[k];
            emit(Json { { "ph", "X" },
                { "name",
                    std::string(c.label) + " " + to_string(type) + " L" + std::to_string(first) + "-"
                        + std::to_string(last) + " mb" + std::to_string(g.microbatch(i)) },
                { "cat", c.label }, { "pid", g.device(i) }, { "tid", track_of(c.stream) }, { "ts", ts },
                { "dur", us(c.busy_s) } });
        }
    }
}

// The critical path as flow arrows from each op to the next one it waited for.
template <typename Emit> void emit_critical_path(const SimulatedPlan& sim, Emit&& emit)
{
    const ExecutionGraph& g = sim.lowered.graph;
    const SimulationResult& r = sim.result;
    std::optional<std::uint32_t> prev;
    std::uint32_t flow = 0;
    for (std::uint32_t op : r.critical_path) {
        if (op >= g.size() || g.type(op) == IrOpType::barrier)
            continue;
        if (prev) {
            const auto from = *prev;
            emit(Json { { "ph", "s" }, { "name", "critical path" }, { "cat", "critical_path" }, { "id", flow },
                { "pid", g.device(from) }, { "tid", track_of(g.stream(from)) }, { "ts", us(r.end_s[from]) } });
            emit(Json { { "ph", "f" }, { "bp", "e" }, { "name", "critical path" }, { "cat", "critical_path" },
                { "id", flow }, { "pid", g.device(op) }, { "tid", track_of(g.stream(op)) },
                { "ts", us(r.start_s[op]) } });
            ++flow;
        }
        prev = op;
    }
}

// Each stage's power per GPU as a counter track.
template <typename Emit> void emit_power(const SimulatedPlan& sim, Emit&& emit)
{
    const PowerTrace& power = sim.power;
    if (power.makespan_s <= 0)
        return;
    for (int d = 0; d < static_cast<int>(power.devices.size()); ++d) {
        const PowerTrace::Buckets b = power.bucketed(d, 0, power.makespan_s, kPowerSamplesPerStage);
        const double dt = (b.t1 - b.t0) / std::max<std::size_t>(1, b.mean_W.size());
        for (std::size_t k = 0; k < b.mean_W.size(); ++k) {
            if (k > 0 && b.mean_W[k] == b.mean_W[k - 1])
                continue; // a counter holds its value until the next sample
            emit(Json { { "ph", "C" }, { "name", "power per GPU (W)" }, { "pid", d },
                { "ts", us(b.t0 + dt * static_cast<double>(k)) }, { "args", { { "W", b.mean_W[k] } } } });
        }
    }
}

template <typename Emit> void for_each_event(const SimulatedPlan& sim, const std::string& title, Emit&& emit)
{
    emit_metadata(sim, title, emit);
    emit_ops(sim, emit);
    emit_critical_path(sim, emit);
    emit_power(sim, emit);
}

// Names come from users (a model called "a\tb", any length, even invalid UTF-8): nlohmann escapes
// every control character and replaces bytes that are not UTF-8, so the file is always valid JSON.
std::string serialise(const Json& e)
{
    return e.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace

nlohmann::json chrome_trace(const SimulatedPlan& sim, const std::string& title)
{
    Json events = Json::array();
    // Through the serialiser, so that the tree holds exactly what a file would (invalid UTF-8 replaced).
    for_each_event(sim, title, [&](const Json& e) { events.push_back(Json::parse(serialise(e))); });
    return Json { { "traceEvents", std::move(events) }, { "displayTimeUnit", "ms" } };
}

void write_chrome_trace(const SimulatedPlan& sim, const std::string& title, const std::string& path)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw InputError(path, "", "cannot write the trace file");
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    bool first = true;
    for_each_event(sim, title, [&](const Json& e) {
        if (!first)
            out << ",\n";
        first = false;
        out << serialise(e);
    });
    out << "\n]}\n";
    if (!out)
        throw InputError(path, "", "writing the trace failed (disk full?)");
}

} // namespace parallax
