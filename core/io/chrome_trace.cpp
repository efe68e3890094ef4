#include "io/chrome_trace.hpp"

#include "spec/input_error.hpp"
#include "viewdata/comm_companions.hpp"

#include <cstdio>
#include <fstream>

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

std::string escape(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

template <typename Emit> void for_each_event(const SimulatedPlan& sim, const std::string& title, Emit&& emit)
{
    const ExecutionGraph& g = sim.lowered.graph;
    const SimulationResult& r = sim.result;
    char buf[512];
    std::snprintf(buf, sizeof buf, R"({"ph":"M","name":"process_name","pid":%d,"args":{"name":"%s"}})", g.devices,
        escape(title + " (whole step)").c_str());
    emit(buf);
    for (int d = 0; d < g.devices; ++d) {
        std::snprintf(buf, sizeof buf, R"({"ph":"M","name":"process_name","pid":%d,"args":{"name":"stage %d"}})", d, d);
        emit(buf);
        std::snprintf(
            buf, sizeof buf, R"({"ph":"M","name":"process_sort_index","pid":%d,"args":{"sort_index":%d}})", d, d);
        emit(buf);
        for (int t = 0; t < 7; ++t) {
            std::snprintf(buf, sizeof buf, R"({"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"%s"}})",
                d, t, track_name(t));
            emit(buf);
        }
    }
    for (std::uint32_t i = 0; i < g.size(); ++i) {
        const IrOpType type = g.type(i);
        if (type == IrOpType::barrier)
            continue;
        const int chunk = g.chunk(i);
        int first = -1, last = -1;
        if (chunk >= 0 && chunk < static_cast<int>(sim.lowered.chunk_timing.size())) {
            const ChunkTiming& ct = sim.lowered.chunk_timing[chunk];
            first = ct.first_layer;
            last = ct.first_layer + ct.layers - 1;
        }
        const std::string name = g.label(i, first, last);
        const double ts = r.start_s[i] * kMicroseconds;
        const double dur = g.duration_s(i) * kMicroseconds;
        std::snprintf(buf, sizeof buf,
            R"({"ph":"X","name":"%s","cat":"%s","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{"op":%u,"microbatch":%d,"chunk":%d,"bytes":%.0f}})",
            escape(name).c_str(), to_string(type), g.device(i), track_of(g.stream(i)), ts, dur, i, g.microbatch(i),
            chunk, static_cast<double>(g.bytes(i)));
        emit(buf);
        // The collectives that run under a compute pass, on their own tracks (their busy time per
        // micro-batch; the exposed part is inside the pass).
        CommCompanion comms[kMaxCommCompanions];
        const int n = comm_companions(sim.lowered, i, comms);
        for (int k = 0; k < n; ++k) {
            const CommCompanion& c = comms[k];
            std::snprintf(buf, sizeof buf,
                R"({"ph":"X","name":"%s %s L%d-%d mb%d","cat":"%s","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f})", c.label,
                to_string(type), first, last, g.microbatch(i), c.label, g.device(i), track_of(c.stream), ts,
                c.busy_s * kMicroseconds);
            emit(buf);
        }
    }
}

} // namespace

nlohmann::json chrome_trace(const SimulatedPlan& sim, const std::string& title)
{
    nlohmann::json events = nlohmann::json::array();
    for_each_event(sim, title, [&](const char* e) { events.push_back(nlohmann::json::parse(e)); });
    return nlohmann::json { { "traceEvents", events }, { "displayTimeUnit", "ms" } };
}

void write_chrome_trace(const SimulatedPlan& sim, const std::string& title, const std::string& path)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw InputError(path, "", "cannot write the trace file");
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    bool first = true;
    for_each_event(sim, title, [&](const char* e) {
        if (!first)
            out << ",\n";
        first = false;
        out << e;
    });
    out << "\n]}\n";
    if (!out)
        throw InputError(path, "", "writing the trace failed (disk full?)");
}

} // namespace parallax
