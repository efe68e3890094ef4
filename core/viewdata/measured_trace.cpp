#include "viewdata/measured_trace.hpp"

#include "io/input_limits.hpp"
#include "spec/input_error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

namespace parallax {

namespace {

constexpr double kMicroseconds = 1e6; // Chrome trace times are in microseconds

// pid/tid are numbers in most traces and strings in some (PyTorch's "stream 7"); sort numbers first.
struct TrackKey {
    bool numeric = true;
    double number = 0;
    std::string text;
    bool operator<(const TrackKey& o) const
    {
        if (numeric != o.numeric)
            return numeric;
        return numeric ? number < o.number : natural_less(text, o.text);
    }
    // "stream 7" before "stream 13".
    static bool natural_less(const std::string& a, const std::string& b)
    {
        std::size_t i = 0, j = 0;
        while (i < a.size() && j < b.size()) {
            if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
                std::size_t ie = i, je = j;
                while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
                    ++ie;
                while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
                    ++je;
                const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
                const std::size_t za = na.find_first_not_of('0'), zb = nb.find_first_not_of('0');
                const std::string ta = za == std::string::npos ? "" : na.substr(za),
                                  tb = zb == std::string::npos ? "" : nb.substr(zb);
                if (ta.size() != tb.size())
                    return ta.size() < tb.size();
                if (ta != tb)
                    return ta < tb;
                i = ie;
                j = je;
                continue;
            }
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
        return a.size() - i < b.size() - j;
    }
    bool operator==(const TrackKey& o) const { return numeric == o.numeric && number == o.number && text == o.text; }
};

TrackKey key_of(const nlohmann::json& v)
{
    TrackKey k;
    if (v.is_number()) {
        k.number = v.get<double>();
        k.text = v.dump();
    } else if (v.is_string()) {
        k.numeric = false;
        k.text = v.get<std::string>();
    } else {
        k.text = v.is_null() ? "0" : v.dump();
    }
    return k;
}

bool contains(const std::string& hay, const char* needle)
{
    return hay.find(needle) != std::string::npos;
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool is_gpu_category(const std::string& cat)
{
    const std::string c = lower(cat);
    return c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset" || c == "memcpy" || c == "memset";
}

TimelineKind classify(const std::string& name, const std::string& cat)
{
    // A Parallax trace names its categories after the op kinds: read them back exactly.
    static const std::map<std::string, TimelineKind> own = { { "F", TimelineKind::forward },
        { "B", TimelineKind::backward_input }, { "W", TimelineKind::backward_weight }, { "R", TimelineKind::recompute },
        { "send", TimelineKind::pp_send }, { "dp-reduce", TimelineKind::dp_reduce },
        { "param-gather", TimelineKind::param_gather }, { "zero3-gather", TimelineKind::zero3_gather },
        { "zero3-reduce-scatter", TimelineKind::zero3_reduce_scatter }, { "optimizer", TimelineKind::optimizer },
        { "offload", TimelineKind::offload }, { "TP", TimelineKind::tp_comm }, { "CP", TimelineKind::cp_comm },
        { "EP", TimelineKind::ep_comm } };
    if (auto it = own.find(cat); it != own.end())
        return it->second;
    const std::string n = lower(name);
    const std::string c = lower(cat);
    for (const char* k : { "nccl", "allreduce", "all_reduce", "allgather", "all_gather", "reducescatter",
             "reduce_scatter", "sendrecv", "alltoall", "all_to_all", "broadcast", "c10d" })
        if (contains(n, k))
            return TimelineKind::measured_comm;
    if (contains(c, "memcpy") || contains(c, "memset") || contains(n, "memcpy"))
        return TimelineKind::measured_comm;
    return TimelineKind::measured_kernel;
}

struct RawEvent {
    double start_s, end_s;
    std::uint32_t name;
    TimelineKind kind;
};

// A numeric field, or a string holding a number; false when absent or not a number.
// A string field, or "" when absent or of another type (json::value would throw on a number).
std::string string_field(const nlohmann::json& e, const char* key)
{
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool number_field(const nlohmann::json& e, const char* key, double& v)
{
    auto it = e.find(key);
    if (it == e.end())
        return false;
    if (it->is_number()) {
        v = it->get<double>();
        return true;
    }
    if (it->is_string()) {
        try {
            v = std::stod(it->get<std::string>());
            return true;
        } catch (const std::exception&) {
            return false;
        }
    }
    return false;
}

// The event list of a Chrome trace: the document itself, or its "traceEvents".
const nlohmann::json& trace_events(const nlohmann::json& doc, const std::string& origin)
{
    if (doc.is_array())
        return doc;
    if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array())
        return doc["traceEvents"];
    throw InputError(
        origin, "traceEvents", "expected a Chrome trace: an array of events or an object with \"traceEvents\"");
}

using Track = std::pair<TrackKey, TrackKey>; // (pid, tid)

// The events of a trace sorted into tracks, with the names the trace gives its processes and threads.
class TraceReader {
public:
    TraceReader(const std::string& origin, bool gpu_only, std::vector<std::string>& names)
        : origin_(origin)
        , gpu_only_(gpu_only)
        , names_(names)
    {
    }

    // `index`: the event's position in the list, for error messages.
    void read(const nlohmann::json& e, std::size_t index)
    {
        if (!e.is_object())
            return;
        const std::string ph = string_field(e, "ph");
        const TrackKey pid = key_of(e.contains("pid") ? e["pid"] : nlohmann::json());
        const TrackKey tid = key_of(e.contains("tid") ? e["tid"] : nlohmann::json());
        if (ph == "M") {
            read_metadata(e, pid, tid);
            return;
        }
        if (ph != "X" && ph != "B" && ph != "E")
            return;
        const std::string cat = string_field(e, "cat");
        if (gpu_only_ && ph != "E" && !is_gpu_category(cat)) // an "E" closes its "B" and often has no category
            return;
        const std::string name
            = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : std::string();
        double ts = 0;
        if (!number_field(e, "ts", ts))
            throw InputError(
                origin_, "traceEvents[" + std::to_string(index) + "].ts", "expected a time stamp in microseconds");
        auto& track = tracks[{ pid, tid }];
        if (ph == "X") {
            double dur = 0;
            if (!number_field(e, "dur", dur) || dur < 0)
                dur = 0;
            track.push_back({ ts / kMicroseconds, (ts + dur) / kMicroseconds, intern(name), classify(name, cat) });
        } else if (ph == "B") {
            open_[{ pid, tid }].push_back({ ts, name + "\x1f" + cat });
        } else {
            auto& stack = open_[{ pid, tid }];
            if (stack.empty())
                return;
            const auto [begin, tag] = stack.back();
            stack.pop_back();
            const std::size_t sep = tag.find('\x1f');
            const std::string n = tag.substr(0, sep), c = tag.substr(sep + 1);
            track.push_back({ begin / kMicroseconds, std::max(begin, ts) / kMicroseconds, intern(n), classify(n, c) });
        }
    }

    // "process name / thread name", or the ids where the trace names neither.
    std::string label(const Track& key) const
    {
        const auto pn = process_names_.find(key.first);
        const auto tn = thread_names_.find(key);
        return (pn != process_names_.end() ? pn->second : "pid " + key.first.text) + " / "
            + (tn != thread_names_.end() ? tn->second : "tid " + key.second.text);
    }

    std::map<Track, std::vector<RawEvent>> tracks;

private:
    void read_metadata(const nlohmann::json& e, const TrackKey& pid, const TrackKey& tid)
    {
        const std::string what = string_field(e, "name");
        const auto args = e.find("args");
        if (args == e.end() || !args->is_object() || !args->contains("name") || !(*args)["name"].is_string())
            return;
        if (what == "process_name")
            process_names_[pid] = (*args)["name"].get<std::string>();
        else if (what == "thread_name")
            thread_names_[{ pid, tid }] = (*args)["name"].get<std::string>();
    }

    std::uint32_t intern(const std::string& s)
    {
        auto [it, fresh] = name_ids_.emplace(s, static_cast<std::uint32_t>(names_.size()));
        if (fresh)
            names_.push_back(s);
        return it->second;
    }

    const std::string& origin_;
    const bool gpu_only_;
    std::vector<std::string>& names_;
    std::map<TrackKey, std::string> process_names_;
    std::map<Track, std::string> thread_names_;
    std::map<Track, std::vector<std::pair<double, std::string>>> open_; // B/E stacks
    std::unordered_map<std::string, std::uint32_t> name_ids_;
};

// One track's row: its outermost events from the trace's origin, nested ones counted and dropped.
TimelineRow measured_row(std::string label, std::vector<RawEvent>& evs, double origin_s, MeasuredTrace& out)
{
    std::stable_sort(evs.begin(), evs.end(), [](const RawEvent& a, const RawEvent& b) {
        return a.start_s < b.start_s || (a.start_s == b.start_s && a.end_s > b.end_s);
    });
    TimelineRow row;
    row.stage = -1;
    row.kind = TimelineRowKind::measured;
    row.label = std::move(label);
    double last_end = -std::numeric_limits<double>::infinity();
    for (const RawEvent& ev : evs) {
        double s = ev.start_s - origin_s;
        const double e = ev.end_s - origin_s;
        if (e <= last_end) {
            ++out.nested; // inside the previous outer event
            continue;
        }
        s = std::max(s, last_end);
        TimelineItem it;
        it.start_s = s;
        it.end_s = e;
        it.op = ev.name;
        it.kind = ev.kind;
        row.items.push_back(it);
        last_end = e;
    }
    bool present[kTimelineKindCount] = {};
    for (const TimelineItem& it : row.items)
        present[static_cast<int>(it.kind)] = true;
    std::uint8_t slot_of[kTimelineKindCount] = {};
    for (int k = 0; k < kTimelineKindCount; ++k)
        if (present[k]) {
            if (static_cast<int>(row.kinds.size()) < kLodSlots)
                row.kinds.push_back(static_cast<TimelineKind>(k));
            slot_of[k] = static_cast<std::uint8_t>(row.kinds.size() - 1);
        }
    for (TimelineItem& it : row.items) {
        it.slot = slot_of[static_cast<int>(it.kind)];
        row.busy_s += it.duration_s();
        out.span_s = std::max(out.span_s, it.end_s);
    }
    row.index_blocks();
    return row;
}

} // namespace

MeasuredTrace parse_measured_trace(const std::string& text, const std::string& origin)
{
    nlohmann::json doc;
    try {
        check_json_nesting(text, origin);
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(origin, "", std::string("not a JSON trace: ") + e.what());
    }
    const nlohmann::json& events = trace_events(doc, origin);

    MeasuredTrace out;
    out.path = origin;
    bool any_gpu = false;
    for (const nlohmann::json& e : events)
        if (e.is_object() && string_field(e, "ph") == "X" && is_gpu_category(string_field(e, "cat")))
            any_gpu = true;
    out.gpu_only = any_gpu;

    TraceReader reader(origin, any_gpu, out.names);
    std::size_t index = 0;
    for (const nlohmann::json& e : events)
        reader.read(e, index++);

    double origin_s = std::numeric_limits<double>::infinity();
    for (const auto& [key, evs] : reader.tracks)
        for (const RawEvent& ev : evs)
            origin_s = std::min(origin_s, ev.start_s);
    if (!(origin_s < std::numeric_limits<double>::infinity()))
        throw InputError(
            origin, "traceEvents", "the trace has no complete (\"X\") or begin/end (\"B\"/\"E\") events to draw");
    out.origin_s = origin_s;

    for (auto& [key, evs] : reader.tracks) {
        if (evs.empty())
            continue;
        TimelineRow row = measured_row(reader.label(key), evs, origin_s, out);
        out.events += row.items.size();
        out.rows.push_back(std::move(row));
    }
    return out;
}

MeasuredTrace load_measured_trace(const std::string& path)
{
    return parse_measured_trace(read_input_file(path, kMaxTraceFileBytes), path);
}

} // namespace parallax
