#include "viewdata/timeline_data.hpp"

#include "io/number_format.hpp"
#include "spec/hetero_label.hpp"
#include "spec/scenario.hpp"
#include "spec/strategy_label.hpp"
#include "viewdata/comm_companions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace parallax {

namespace {

constexpr int kRowKinds = kTimelineRowKindCount;

// The row an op's stream is drawn in; the sync pseudo-stream (zero-length barriers) is not drawn.
bool row_kind_of(IrStream s, TimelineRowKind& out)
{
    switch (s) {
    case IrStream::compute:
        out = TimelineRowKind::compute;
        return true;
    case IrStream::tp:
        out = TimelineRowKind::tp;
        return true;
    case IrStream::cp:
        out = TimelineRowKind::cp;
        return true;
    case IrStream::ep:
        out = TimelineRowKind::ep;
        return true;
    case IrStream::pp:
        out = TimelineRowKind::pp;
        return true;
    case IrStream::dp:
    case IrStream::dp_gather:
        out = TimelineRowKind::dp;
        return true;
    case IrStream::sync:
        return false;
    }
    return false;
}

bool is_pipeline_pass(IrOpType t)
{
    return t == IrOpType::forward || t == IrOpType::backward_input || t == IrOpType::backward_weight
        || t == IrOpType::recompute;
}

bool is_dag_node(IrOpType t)
{
    return is_pipeline_pass(t) || t == IrOpType::optimizer || t == IrOpType::offload;
}

// Gaps of `busy` (sorted, disjoint items) inside [lo, hi].
template <typename F> void for_each_gap(const std::vector<TimelineItem>& busy, double lo, double hi, F&& f)
{
    double t = lo;
    for (const TimelineItem& it : busy) {
        if (it.start_s >= hi)
            break;
        if (it.start_s > t)
            f(t, std::min(it.start_s, hi));
        t = std::max(t, it.end_s);
    }
    if (t < hi)
        f(t, hi);
}

// Parts of [b, e] that `cover` (sorted, disjoint) does not cover, from cursor j on (monotone).
template <typename F>
void subtract_cover(const std::vector<TimelineItem>& cover, std::size_t& j, double b, double e, F&& f)
{
    while (j < cover.size() && cover[j].end_s <= b)
        ++j;
    double t = b;
    for (std::size_t k = j; k < cover.size() && cover[k].start_s < e; ++k) {
        if (cover[k].start_s > t)
            f(t, cover[k].start_s);
        t = std::max(t, cover[k].end_s);
        if (t >= e)
            break;
    }
    if (t < e)
        f(t, e);
}

void push_interval(std::vector<TimelineInterval>& v, double b, double e)
{
    if (!(e > b))
        return;
    if (!v.empty() && v.back().end_s >= b)
        v.back().end_s = std::max(v.back().end_s, e);
    else
        v.push_back({ b, e });
}

double interval_sum(const std::vector<TimelineInterval>& v)
{
    double s = 0;
    for (const TimelineInterval& i : v)
        s += i.end_s - i.begin_s;
    return s;
}

// Adds interval overlaps of `v` with the bins to `field` (bin edges as in aggregate_row).
template <typename Field>
void aggregate_intervals(
    const std::vector<TimelineInterval>& v, double t0, double bin_s, std::span<LodBin> bins, Field field)
{
    const std::size_t nb = bins.size();
    const double t_end = t0 + static_cast<double>(nb) * bin_s;
    const double inv = 1.0 / bin_s;
    auto edge = [&](std::size_t b) { return t0 + static_cast<double>(b) * bin_s; };
    auto it
        = std::lower_bound(v.begin(), v.end(), t0, [](const TimelineInterval& a, double t) { return a.end_s <= t; });
    for (; it != v.end() && it->begin_s < t_end; ++it) {
        const double s = std::max(it->begin_s, t0), e = std::min(it->end_s, t_end);
        const double f = (s - t0) * inv;
        std::size_t b = f > 0 ? std::min(nb - 1, static_cast<std::size_t>(f)) : 0;
        if (b > 0 && s < edge(b))
            --b;
        if (b + 1 >= nb || e <= edge(b + 1)) {
            if (e > s)
                bins[b].*field += static_cast<float>(e - s);
            continue;
        }
        for (; b < nb; ++b) {
            const double lo = edge(b);
            if (lo >= e)
                break;
            const double ov = std::min(e, edge(b + 1)) - std::max(s, lo);
            if (ov > 0)
                bins[b].*field += static_cast<float>(ov);
        }
    }
}

} // namespace

TimelineKind timeline_kind(IrOpType t)
{
    switch (t) {
    case IrOpType::forward:
        return TimelineKind::forward;
    case IrOpType::backward_input:
        return TimelineKind::backward_input;
    case IrOpType::backward_weight:
        return TimelineKind::backward_weight;
    case IrOpType::recompute:
        return TimelineKind::recompute;
    case IrOpType::pp_send:
        return TimelineKind::pp_send;
    case IrOpType::dp_reduce:
        return TimelineKind::dp_reduce;
    case IrOpType::param_gather:
        return TimelineKind::param_gather;
    case IrOpType::zero3_gather:
        return TimelineKind::zero3_gather;
    case IrOpType::zero3_reduce_scatter:
        return TimelineKind::zero3_reduce_scatter;
    case IrOpType::optimizer:
        return TimelineKind::optimizer;
    case IrOpType::offload:
        return TimelineKind::offload;
    case IrOpType::tp_comm:
        return TimelineKind::tp_comm;
    case IrOpType::cp_comm:
        return TimelineKind::cp_comm;
    case IrOpType::ep_comm:
        return TimelineKind::ep_comm;
    case IrOpType::barrier:
        break;
    }
    return TimelineKind::measured_other;
}

const char* to_string(TimelineKind k)
{
    switch (k) {
    case TimelineKind::forward:
        return "forward (F)";
    case TimelineKind::backward_input:
        return "backward, input gradient (B)";
    case TimelineKind::backward_weight:
        return "backward, weight gradient (W)";
    case TimelineKind::recompute:
        return "recompute (R)";
    case TimelineKind::pp_send:
        return "pipeline send/recv";
    case TimelineKind::dp_reduce:
        return "DP gradient reduction";
    case TimelineKind::param_gather:
        return "DP parameter all-gather";
    case TimelineKind::zero3_gather:
        return "ZeRO-3 parameter all-gather";
    case TimelineKind::zero3_reduce_scatter:
        return "ZeRO-3 gradient reduce-scatter";
    case TimelineKind::optimizer:
        return "optimizer step";
    case TimelineKind::offload:
        return "optimizer offload (PCIe)";
    case TimelineKind::tp_comm:
        return "TP collectives";
    case TimelineKind::cp_comm:
        return "CP exchange";
    case TimelineKind::ep_comm:
        return "EP all-to-all";
    case TimelineKind::measured_kernel:
        return "measured compute";
    case TimelineKind::measured_comm:
        return "measured communication";
    case TimelineKind::measured_other:
        return "measured";
    }
    return "?";
}

const char* short_name(TimelineKind k)
{
    static const char* names[kTimelineKindCount] = { "F", "B", "W", "R", "send", "dp-reduce", "param-gather",
        "zero3-gather", "zero3-rs", "opt", "offload", "TP", "CP", "EP", "kernel", "comm", "other" };
    const int i = static_cast<int>(k);
    return i >= 0 && i < kTimelineKindCount ? names[i] : "?";
}

bool is_communication(TimelineKind k)
{
    switch (k) {
    case TimelineKind::pp_send:
    case TimelineKind::dp_reduce:
    case TimelineKind::param_gather:
    case TimelineKind::zero3_gather:
    case TimelineKind::zero3_reduce_scatter:
    case TimelineKind::tp_comm:
    case TimelineKind::cp_comm:
    case TimelineKind::ep_comm:
    case TimelineKind::measured_comm:
        return true;
    default:
        return false;
    }
}

const char* to_string(TimelineRowKind k)
{
    switch (k) {
    case TimelineRowKind::compute:
        return "compute";
    case TimelineRowKind::tp:
        return "TP";
    case TimelineRowKind::cp:
        return "CP";
    case TimelineRowKind::ep:
        return "EP";
    case TimelineRowKind::pp:
        return "PP";
    case TimelineRowKind::dp:
        return "DP";
    case TimelineRowKind::measured:
        return "measured";
    }
    return "?";
}

std::size_t TimelineRow::first_ending_after(double t) const
{
    // Items ending exactly at t with a length are wholly before t; a zero-length item at t is not.
    auto it
        = std::lower_bound(items.begin(), items.end(), t, [](const TimelineItem& a, double v) { return a.end_s < v; });
    while (it != items.end() && it->end_s == t && it->start_s < t)
        ++it;
    return static_cast<std::size_t>(it - items.begin());
}

void TimelineRow::index_blocks()
{
    block_max_s.assign((items.size() + kBlock - 1) / kBlock, 0.0f);
    for (std::size_t i = 0; i < items.size(); ++i)
        block_max_s[i / kBlock] = std::max(block_max_s[i / kBlock], static_cast<float>(items[i].duration_s()));
}

std::size_t TimelineRow::item_at(double t) const
{
    const std::size_t i = first_ending_after(t);
    if (i < items.size() && items[i].start_s <= t)
        return i;
    return npos;
}

int LodBin::dominant_slot() const
{
    int best = -1;
    float v = 0;
    for (int s = 0; s < kLodSlots; ++s)
        if (slot_busy[s] > v) {
            v = slot_busy[s];
            best = s;
        }
    return best;
}

std::size_t aggregate_row(const TimelineRow& row, double t0, double bin_s, std::span<LodBin> bins)
{
    std::fill(bins.begin(), bins.end(), LodBin {});
    const std::size_t nb = bins.size();
    if (nb == 0 || !(bin_s > 0))
        return 0;
    const double t_end = t0 + static_cast<double>(nb) * bin_s;
    const double inv = 1.0 / bin_s;
    // Bin edges are always computed by this one expression, so neighbouring bins share them exactly
    // and the overlaps of one item telescope to its duration.
    auto edge = [&](std::size_t b) { return t0 + static_cast<double>(b) * bin_s; };
    constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
    const std::size_t n = row.items.size();
    const TimelineItem* items = row.items.data();
    std::size_t i = row.first_ending_after(t0);
    const std::size_t first = i;
    auto add = [&](LodBin& bin, const TimelineItem& it, std::size_t index, double ov) {
        bin.busy_s += ov;
        const float ovf = static_cast<float>(ov);
        bin.slot_busy[it.slot] += ovf;
        const bool top = ovf > bin.top_overlap || bin.top_item == kNone;
        bin.top_overlap = top ? ovf : bin.top_overlap;
        bin.top_item = top ? static_cast<std::uint32_t>(index) : bin.top_item;
        bin.critical |= (it.flags & TimelineItem::kCritical) != 0;
    };
    for (; i < n; ++i) {
        const TimelineItem& it = items[i];
        if (it.start_s >= t_end)
            break;
        const double s = std::max(it.start_s, t0), e = std::min(it.end_s, t_end);
        const double f = (s - t0) * inv;
        const std::size_t b0 = f > 0 ? std::min(nb - 1, static_cast<std::size_t>(f)) : 0;
        LodBin& bin0 = bins[b0];
        ++bin0.ops;
        if (e <= edge(b0 + 1) || b0 + 1 == nb) {
            // Inside one bin (most items when zoomed out; a zero-length one too): its whole length.
            add(bin0, it, i, e - s);
            continue;
        }
        // Across bins: each bin gets its clipped part. Rounding in f can put b0 one bin late; start
        // one earlier then, so no sliver is lost.
        for (std::size_t b = b0 > 0 && s < edge(b0) ? b0 - 1 : b0; b < nb; ++b) {
            const double lo = edge(b);
            if (lo >= e)
                break;
            const double ov = std::min(e, edge(b + 1)) - std::max(s, lo);
            if (ov > 0)
                add(bins[b], it, i, ov);
        }
    }
    aggregate_intervals(row.exposed, t0, bin_s, bins, &LodBin::exposed_s);
    aggregate_intervals(row.bubbles, t0, bin_s, bins, &LodBin::bubble_s);
    return i - first;
}

std::vector<TimelineSummaryItem> timeline_summary(const Prediction& p)
{
    const TimeBreakdown& t = p.time;
    std::vector<TimelineSummaryItem> items = {
        { "compute", t.compute_s, TimelineKind::forward, false },
        { "recompute", t.recompute_s, TimelineKind::recompute, false },
        { "bubble", t.bubble_s, TimelineKind::measured_other, true },
        { "exposed TP", t.exposed_tp_s, TimelineKind::tp_comm, false },
        { "exposed CP", t.exposed_cp_s, TimelineKind::cp_comm, false },
        { "exposed EP", t.exposed_ep_s, TimelineKind::ep_comm, false },
        { "exposed PP", t.exposed_pp_s, TimelineKind::pp_send, false },
        { "exposed DP", t.exposed_dp_s, TimelineKind::dp_reduce, false },
        { "optimizer", t.optimizer_s, TimelineKind::optimizer, false },
        { "offload", t.offload_s, TimelineKind::offload, false },
        { "data stall", t.data_stall_s, TimelineKind::measured_other, true },
        { "host copies", t.host_copy_s, TimelineKind::offload, false },
    };
    return items;
}

TimelinePlanInfo timeline_plan_info(const Scenario& sc)
{
    TimelinePlanInfo info;
    if (sc.heterogeneous()) { // its stages differ: none stands for another
        info.title = sc.model.name + "  " + hetero_plan_label(sc);
        info.collapse_identical_stages = false;
        return info;
    }
    info.title = sc.model.name + "  " + strategy_label(sc.strategy);
    info.strategy = sc.strategy;
    return info;
}

std::pair<int, int> TimelineData::layers_of(std::uint32_t op) const
{
    const int chunk = graph().chunk(op);
    const auto& timing = sim->lowered.chunk_timing;
    if (chunk < 0 || chunk >= static_cast<int>(timing.size()))
        return { -1, -1 };
    const ChunkTiming& ct = timing[static_cast<std::size_t>(chunk)];
    return { ct.first_layer, ct.first_layer + ct.layers - 1 };
}

std::string TimelineData::op_label(std::uint32_t op) const
{
    const auto [first, last] = layers_of(op);
    return graph().label(op, first, last);
}

long long TimelineData::total_gpus() const
{
    long long n = 0;
    for (const TimelineStage& s : stages)
        n += s.gpus();
    return n;
}

std::string format_duration(double seconds)
{
    const double a = std::fabs(seconds);
    if (a == 0)
        return "0 s";
    if (a >= 100)
        return format_number("%.1f s", seconds);
    if (a >= 1)
        return format_number("%.3f s", seconds);
    if (a >= 1e-3)
        return format_number(a >= 0.1 ? "%.1f ms" : "%.3g ms", seconds * 1e3);
    if (a >= 1e-6)
        return format_number("%.3g \xc2\xb5s", seconds * 1e6);
    return format_number("%.3g ns", seconds * 1e9);
}

std::string format_si(double value, const char* unit)
{
    static const char* prefixes[] = { "", "k", "M", "G", "T", "P", "E" };
    int p = 0;
    double v = value;
    while (std::fabs(v) >= 1000 && p < 6) {
        v /= 1000;
        ++p;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[p], unit);
    return buf;
}

std::string TimelineData::describe(const TimelineRow& row, const TimelineItem& item) const
{
    const ExecutionGraph& g = graph();
    const std::uint32_t op = item.op;
    std::string s;
    const auto [first, last] = layers_of(op);
    const int stage = g.device(op);
    if (item.flags & TimelineItem::kCompanion) {
        s = std::string(to_string(item.kind)) + " under " + op_label(op) + "\n";
        s += "stage " + std::to_string(stage) + ", busy " + format_duration(item.duration_s()) + " of the pass's "
            + format_duration(g.duration_s(op));
        double exposed = 0;
        auto it = std::lower_bound(row.exposed.begin(), row.exposed.end(), item.start_s,
            [](const TimelineInterval& a, double t) { return a.end_s <= t; });
        for (; it != row.exposed.end() && it->begin_s < item.end_s; ++it)
            exposed += std::min(it->end_s, item.end_s) - std::max(it->begin_s, item.start_s);
        s += "\nexposed (not hidden under compute) " + format_duration(exposed);
        s += "\nstart " + format_duration(item.start_s) + "   end " + format_duration(item.end_s);
        return s;
    }
    s = op_label(op) + "   " + to_string(item.kind) + "\n";
    s += "stage " + std::to_string(stage);
    const int chunk = g.chunk(op);
    if (chunk >= 0) {
        s += ", chunk " + std::to_string(chunk);
        if (chunks_per_device > 1)
            s += " (virtual stage " + std::to_string(item.shade) + " of " + std::to_string(chunks_per_device)
                + " on this device)";
    }
    if (first >= 0)
        s += "\nlayers " + std::to_string(first) + "-" + std::to_string(last) + " (" + std::to_string(last - first + 1)
            + ")";
    if (g.microbatch(op) >= 0)
        s += "\nmicro-batch " + std::to_string(g.microbatch(op));
    if (g.flops(op) > 0) {
        s += "\nFLOPs " + format_si(g.flops(op), "FLOP");
    } else if (chunk >= 0 && is_pipeline_pass(g.type(op))
        && chunk < static_cast<int>(sim->lowered.chunk_timing.size())) {
        // The IR carries FLOPs per chunk, not per pass.
        const double f = sim->lowered.chunk_timing[static_cast<std::size_t>(chunk)].flops;
        if (f > 0)
            s += "\nFLOPs " + format_si(f, "FLOP") + " per micro-batch for the chunk's F+B+W (incl. recompute)";
    }
    if (g.bytes(op) > 0)
        s += "\nbytes " + format_si(g.bytes(op), "B");
    if (g.link(op) != IrLink::none)
        s += std::string("\nlink ") + to_string(g.link(op));
    if (g.activation_delta(op) != 0)
        s += std::string("\nactivations ") + (g.activation_delta(op) > 0 ? "+" : "-")
            + format_si(std::fabs(g.activation_delta(op)), "B");
    s += "\nstart " + format_duration(item.start_s) + "   end " + format_duration(item.end_s) + "   duration "
        + format_duration(item.duration_s());
    const double nominal = g.duration_s(op);
    if (std::fabs(item.duration_s() - nominal) > 1e-3 * std::max(nominal, 1e-12))
        s += "\n(alone on its link it takes " + format_duration(nominal) + "; it shares the link)";
    if (item.flags & TimelineItem::kCritical)
        s += "\non the critical path";
    return s;
}

namespace {

// Local chunk index on its device (virtual stage, or DualPipe direction): the bar's shade.
std::vector<std::uint8_t> chunk_shades(const LoweredPlan& plan, int devices, int& chunks_per_device)
{
    std::vector<std::uint8_t> chunk_local(plan.chunk_device.size(), 0);
    std::vector<int> seen(static_cast<std::size_t>(devices), 0);
    for (std::size_t c = 0; c < plan.chunk_device.size(); ++c) {
        const int dev = std::clamp(plan.chunk_device[c], 0, devices - 1);
        chunk_local[c] = static_cast<std::uint8_t>(std::min(seen[static_cast<std::size_t>(dev)]++, 255));
        chunks_per_device = std::max(chunks_per_device, seen[static_cast<std::size_t>(dev)]);
    }
    return chunk_local;
}

// Items per (device, row kind) cell, in op order, and the exposed part of each cell's companions.
struct TimelineCells {
    std::vector<std::vector<TimelineItem>> items;
    std::vector<std::vector<TimelineInterval>> exposed;
};

TimelineCells make_cells(const TimelineData& d, int devices, const std::vector<std::uint8_t>& chunk_local)
{
    const LoweredPlan& plan = d.sim->lowered;
    const ExecutionGraph& g = plan.graph;
    const SimulationResult& r = d.sim->result;
    const std::size_t n = g.size();
    auto shade_of = [&](std::uint32_t op) -> std::uint8_t {
        const int c = g.chunk(op);
        return c >= 0 && c < static_cast<int>(chunk_local.size()) ? chunk_local[static_cast<std::size_t>(c)] : 0;
    };
    TimelineCells cells;
    cells.items.resize(static_cast<std::size_t>(devices) * kRowKinds);
    cells.exposed.resize(cells.items.size());
    {
        std::vector<std::size_t> counts(cells.items.size(), 0);
        for (std::uint32_t i = 0; i < n; ++i) {
            TimelineRowKind rk;
            if (g.type(i) != IrOpType::barrier && row_kind_of(g.stream(i), rk))
                ++counts[static_cast<std::size_t>(g.device(i)) * kRowKinds + static_cast<std::size_t>(rk)];
        }
        for (std::size_t c = 0; c < cells.items.size(); ++c)
            cells.items[c].reserve(counts[c]);
    }
    CommCompanion comps[kMaxCommCompanions];
    for (std::uint32_t i = 0; i < n; ++i) {
        const IrOpType type = g.type(i);
        TimelineRowKind rk;
        if (type == IrOpType::barrier || !row_kind_of(g.stream(i), rk))
            continue;
        const std::size_t dev = g.device(i);
        TimelineItem it;
        it.start_s = r.start_s[i];
        it.end_s = r.end_s[i];
        it.op = i;
        it.kind = timeline_kind(type);
        it.shade = shade_of(i);
        it.flags = d.critical[i] ? TimelineItem::kCritical : 0;
        cells.items[dev * kRowKinds + static_cast<std::size_t>(rk)].push_back(it);
        const int nc = comm_companions(plan, i, comps);
        for (int k = 0; k < nc; ++k) {
            TimelineRowKind crk;
            row_kind_of(comps[k].stream, crk);
            TimelineItem c;
            c.start_s = r.start_s[i];
            c.end_s = r.start_s[i] + comps[k].busy_s;
            c.op = i;
            c.kind = timeline_kind(comps[k].type);
            c.shade = it.shade;
            c.flags = TimelineItem::kCompanion;
            const std::size_t cell = dev * kRowKinds + static_cast<std::size_t>(crk);
            cells.items[cell].push_back(c);
            // The exposed part is drawn at the end of the companion bar: the collective the pass waits for.
            if (comps[k].exposed_s > 0)
                cells.exposed[cell].push_back({ c.end_s - comps[k].exposed_s, c.end_s });
        }
    }
    return cells;
}

// One row from its cell: items by start, its level-of-detail slots, its exposed intervals.
TimelineRow make_row(int dev, int kind, std::vector<TimelineItem>&& items, std::vector<TimelineInterval>& exposed)
{
    TimelineRow row;
    row.stage = dev;
    row.kind = static_cast<TimelineRowKind>(kind);
    row.label = to_string(row.kind);
    row.items = std::move(items);
    auto by_start = [](const TimelineItem& a, const TimelineItem& b) {
        return a.start_s < b.start_s
            || (a.start_s == b.start_s && (a.end_s < b.end_s || (a.end_s == b.end_s && a.op < b.op)));
    };
    if (!std::is_sorted(row.items.begin(), row.items.end(), by_start))
        std::sort(row.items.begin(), row.items.end(), by_start);
    // Slots: the row's distinct kinds in kind order.
    bool present[kTimelineKindCount] = {};
    for (const TimelineItem& it : row.items)
        present[static_cast<int>(it.kind)] = true;
    std::uint8_t slot_of[kTimelineKindCount] = {};
    for (int kk = 0; kk < kTimelineKindCount; ++kk) {
        if (!present[kk])
            continue;
        if (static_cast<int>(row.kinds.size()) < kLodSlots)
            row.kinds.push_back(static_cast<TimelineKind>(kk));
        slot_of[kk] = static_cast<std::uint8_t>(row.kinds.size() - 1);
    }
    for (TimelineItem& it : row.items) {
        it.slot = slot_of[static_cast<int>(it.kind)];
        row.busy_s += it.duration_s();
    }
    row.index_blocks();
    std::sort(exposed.begin(), exposed.end(),
        [](const TimelineInterval& a, const TimelineInterval& b) { return a.begin_s < b.begin_s; });
    for (const TimelineInterval& e : exposed)
        push_interval(row.exposed, e.begin_s, e.end_s);
    return row;
}

// Where the rows went: the row of each (device, row kind) cell (-1: none) and each device's rows.
struct RowPlacement {
    std::vector<int> cell_row;
    std::vector<std::vector<int>> device_rows;
    int row_of(int dev, TimelineRowKind k) const
    {
        return cell_row[static_cast<std::size_t>(dev) * kRowKinds + static_cast<std::size_t>(k)];
    }
};

// Rows in display order: per device, compute (always) then TP, CP, EP, PP, DP where they have bars.
RowPlacement add_rows(TimelineData& d, TimelineCells& cells, int devices)
{
    RowPlacement placed;
    placed.device_rows.resize(static_cast<std::size_t>(devices));
    placed.cell_row.assign(cells.items.size(), -1);
    for (int dev = 0; dev < devices; ++dev) {
        for (int k = 0; k < kRowKinds; ++k) {
            const std::size_t cell = static_cast<std::size_t>(dev) * kRowKinds + static_cast<std::size_t>(k);
            if (cells.items[cell].empty() && !(k == 0))
                continue;
            placed.cell_row[cell] = static_cast<int>(d.rows.size());
            placed.device_rows[static_cast<std::size_t>(dev)].push_back(static_cast<int>(d.rows.size()));
            d.rows.push_back(make_row(dev, k, std::move(cells.items[cell]), cells.exposed[cell]));
        }
    }
    return placed;
}

// Where each op's bar is.
void index_op_bars(TimelineData& d, std::size_t n)
{
    d.op_row.assign(n, TimelineData::kNoRow);
    d.op_item.assign(n, TimelineData::kNoRow);
    for (std::size_t ri = 0; ri < d.rows.size(); ++ri) {
        const auto& items = d.rows[ri].items;
        for (std::size_t k = 0; k < items.size(); ++k)
            if (!(items[k].flags & TimelineItem::kCompanion)) {
                d.op_row[items[k].op] = static_cast<std::uint32_t>(ri);
                d.op_item[items[k].op] = static_cast<std::uint32_t>(k);
            }
    }
}

// Successors of every op, in compressed rows (succ_begin / succ).
void index_successors(TimelineData& d, const ExecutionGraph& g)
{
    const std::size_t n = g.size();
    d.succ_begin.assign(n + 1, 0);
    for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t p : g.deps(i))
            ++d.succ_begin[p + 1];
    for (std::size_t i = 0; i < n; ++i)
        d.succ_begin[i + 1] += d.succ_begin[i];
    d.succ.resize(d.succ_begin[n]);
    std::vector<std::uint32_t> fill(d.succ_begin.begin(), d.succ_begin.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t p : g.deps(i))
            d.succ[fill[p]++] = i;
}

// The device's communication streams that can hold compute back (blocking sends, gathers), merged.
std::vector<TimelineItem> merged_waits(const TimelineData& d, const RowPlacement& placed, int dev)
{
    std::vector<TimelineItem> waits;
    for (TimelineRowKind k : { TimelineRowKind::pp, TimelineRowKind::dp })
        if (placed.row_of(dev, k) >= 0) {
            const auto& items = d.rows[static_cast<std::size_t>(placed.row_of(dev, k))].items;
            waits.insert(waits.end(), items.begin(), items.end());
        }
    std::sort(
        waits.begin(), waits.end(), [](const TimelineItem& a, const TimelineItem& b) { return a.start_s < b.start_s; });
    std::vector<TimelineItem> merged;
    for (const TimelineItem& w : waits) {
        if (!merged.empty() && w.start_s <= merged.back().end_s)
            merged.back().end_s = std::max(merged.back().end_s, w.end_s);
        else
            merged.push_back(w);
    }
    return merged;
}

// Exposed pipeline and data-parallel traffic (compute idle meanwhile), bubbles and waits of one stage.
TimelineStage summarize_stage(TimelineData& d, const RowPlacement& placed, int dev, long long gpus_per_stage)
{
    TimelineRow& compute = d.rows[static_cast<std::size_t>(placed.row_of(dev, TimelineRowKind::compute))];
    for (TimelineRowKind k : { TimelineRowKind::pp, TimelineRowKind::dp }) {
        if (placed.row_of(dev, k) < 0)
            continue;
        TimelineRow& row = d.rows[static_cast<std::size_t>(placed.row_of(dev, k))];
        std::size_t j = 0;
        for (const TimelineItem& it : row.items)
            subtract_cover(
                compute.items, j, it.start_s, it.end_s, [&](double b, double e) { push_interval(row.exposed, b, e); });
    }
    const std::vector<TimelineItem> merged = merged_waits(d, placed, dev);
    TimelineStage st;
    st.stage = dev;
    st.members = { dev };
    st.gpus_per_stage = std::max(1LL, gpus_per_stage);
    st.rows = placed.device_rows[static_cast<std::size_t>(dev)];
    std::size_t j = 0;
    for_each_gap(compute.items, 0.0, d.pipeline_end_s, [&](double b, double e) {
        subtract_cover(merged, j, b, e, [&](double bb, double ee) { push_interval(compute.bubbles, bb, ee); });
    });
    st.bubble_s = interval_sum(compute.bubbles);
    for (const TimelineItem& it : compute.items) {
        if (it.kind == TimelineKind::recompute)
            st.recompute_s += it.duration_s();
        else if (it.kind == TimelineKind::optimizer || it.kind == TimelineKind::offload)
            st.optimizer_s += it.duration_s();
        else
            st.compute_s += it.duration_s();
    }
    // Idle inside the pipeline that is not bubble: waiting on its own communication.
    st.comm_wait_s = std::max(0.0, d.pipeline_end_s - st.compute_s - st.recompute_s - st.bubble_s);
    st.tail_s = d.makespan_s - d.pipeline_end_s;
    for (int ri : st.rows) {
        TimelineRow& row = d.rows[static_cast<std::size_t>(ri)];
        row.exposed_s = interval_sum(row.exposed);
        st.exposed_comm_s += row.exposed_s;
    }
    return st;
}

// Stages compared bar by bar, times rounded to a billionth of the step.
class StageComparison {
public:
    StageComparison(const TimelineData& d, const std::vector<TimelineStage>& stages)
        : d_(d)
        , stages_(stages)
        , quantum_(std::max(d.makespan_s, 1e-30) * 1e-9)
    {
    }

    std::uint64_t signature(int dev) const
    {
        std::uint64_t h = 1469598103934665603ULL;
        auto mix = [&](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
        for (int ri : stages_[static_cast<std::size_t>(dev)].rows) {
            const TimelineRow& row = d_.rows[static_cast<std::size_t>(ri)];
            mix(static_cast<std::uint64_t>(row.kind));
            mix(row.items.size());
            for (const TimelineItem& it : row.items) {
                mix(static_cast<std::uint64_t>(it.kind) << 8 | it.shade);
                mix(static_cast<std::uint64_t>(q(it.start_s)));
                mix(static_cast<std::uint64_t>(q(it.end_s)));
            }
        }
        return h;
    }

    bool same(int a, int b) const
    {
        const auto& ra = stages_[static_cast<std::size_t>(a)].rows;
        const auto& rb = stages_[static_cast<std::size_t>(b)].rows;
        if (ra.size() != rb.size())
            return false;
        for (std::size_t k = 0; k < ra.size(); ++k) {
            const TimelineRow& x = d_.rows[static_cast<std::size_t>(ra[k])];
            const TimelineRow& y = d_.rows[static_cast<std::size_t>(rb[k])];
            if (x.kind != y.kind || x.items.size() != y.items.size())
                return false;
            for (std::size_t i = 0; i < x.items.size(); ++i) {
                const TimelineItem &u = x.items[i], &v = y.items[i];
                if (u.kind != v.kind || u.shade != v.shade || q(u.start_s) != q(v.start_s) || q(u.end_s) != q(v.end_s))
                    return false;
            }
        }
        return true;
    }

private:
    long long q(double t) const { return static_cast<long long>(std::llround(t / quantum_)); }

    const TimelineData& d_;
    const std::vector<TimelineStage>& stages_;
    const double quantum_;
};

// Symmetry: stages whose rows are identical (same bars at the same times) are shown once.
void collapse_identical_stages(TimelineData& d, const std::vector<TimelineStage>& stage_info, int devices)
{
    const StageComparison compare(d, stage_info);
    std::unordered_map<std::uint64_t, std::vector<int>> by_sig;
    std::vector<int> group_of(static_cast<std::size_t>(devices), -1);
    for (int dev = 0; dev < devices; ++dev) {
        auto& candidates = by_sig[compare.signature(dev)];
        for (int rep : candidates)
            if (compare.same(rep, dev)) {
                group_of[static_cast<std::size_t>(dev)] = rep;
                break;
            }
        if (group_of[static_cast<std::size_t>(dev)] < 0) {
            group_of[static_cast<std::size_t>(dev)] = dev;
            candidates.push_back(dev);
        }
    }
    for (int dev = 0; dev < devices; ++dev) {
        const int rep = group_of[static_cast<std::size_t>(dev)];
        if (rep == dev)
            d.stages.push_back(stage_info[static_cast<std::size_t>(dev)]);
        else
            for (TimelineStage& s : d.stages)
                if (s.stage == rep) {
                    s.members.push_back(dev);
                    break;
                }
    }
    // The ops of a collapsed stage have no bar of their own: they point at nothing.
    for (int dev = 0; dev < devices; ++dev)
        if (group_of[static_cast<std::size_t>(dev)] != dev)
            for (int ri : stage_info[static_cast<std::size_t>(dev)].rows)
                for (const TimelineItem& it : d.rows[static_cast<std::size_t>(ri)].items)
                    if (!(it.flags & TimelineItem::kCompanion))
                        d.op_row[it.op] = d.op_item[it.op] = TimelineData::kNoRow;
}

} // namespace

std::shared_ptr<const TimelineData> build_timeline_data(
    std::shared_ptr<const SimulatedPlan> sim, const Prediction& prediction, const TimelinePlanInfo& info)
{
    auto d = std::make_shared<TimelineData>();
    d->sim = std::move(sim);
    d->prediction = prediction;
    d->info = info;
    d->summary = timeline_summary(prediction);
    const LoweredPlan& plan = d->sim->lowered;
    const ExecutionGraph& g = plan.graph;
    const SimulationResult& r = d->sim->result;
    const std::size_t n = g.size();
    const int devices = std::max(1, g.devices);
    d->makespan_s = r.makespan_s;
    for (double t : r.compute_last_s)
        d->pipeline_end_s = std::max(d->pipeline_end_s, t);
    const std::vector<std::uint8_t> chunk_local = chunk_shades(plan, devices, d->chunks_per_device);
    d->critical.assign(n, 0);
    for (std::uint32_t op : r.critical_path)
        if (op < n)
            d->critical[op] = 1;

    TimelineCells cells = make_cells(*d, devices, chunk_local);
    const RowPlacement placed = add_rows(*d, cells, devices);
    index_op_bars(*d, n);
    index_successors(*d, g);

    const long long gpus_per_stage
        = info.strategy ? info.strategy->tp * static_cast<long long>(info.strategy->cp) * info.strategy->dp : 1;
    std::vector<TimelineStage> stage_info;
    stage_info.reserve(static_cast<std::size_t>(devices));
    for (int dev = 0; dev < devices; ++dev) {
        // A heterogeneous plan's stages differ in GPUs and GPU types (SimulatedPlan::device_labels).
        const auto k = static_cast<std::size_t>(dev);
        const bool own = k < d->sim->device_gpus.size();
        stage_info.push_back(summarize_stage(*d, placed, dev, own ? d->sim->device_gpus[k] : gpus_per_stage));
        if (k < d->sim->device_labels.size())
            stage_info.back().hardware = d->sim->device_labels[k];
        if (k < d->sim->device_gpu_types.size())
            stage_info.back().gpu_types = d->sim->device_gpu_types[k];
    }
    double most = -1;
    for (const TimelineStage& st : stage_info)
        if (st.compute_s + st.recompute_s > most) {
            most = st.compute_s + st.recompute_s;
            d->slowest_stage = st.stage;
        }
    if (info.collapse_identical_stages && devices > 1 && d->sim->device_labels.empty())
        collapse_identical_stages(*d, stage_info, devices);
    else
        d->stages = std::move(stage_info);
    return d;
}

namespace {

// The compute ops next to `op` along `neighbours` (its dependencies or its successors), communication ops
// (and the barrier) folded into the edge: a compute op reached only through them is an indirect edge.
template <class Neighbours>
void dag_neighbours(const ExecutionGraph& g, std::uint32_t op, Neighbours neighbours, std::vector<DagEdge>& out)
{
    // A bound on the walk through communication: a barrier joins every stage, and the walk only needs
    // the compute ops right behind it.
    constexpr std::size_t kMaxFoldedOps = 4096;
    out.clear();
    std::vector<std::uint32_t> stack;
    std::vector<std::uint32_t> seen;
    for (std::uint32_t n : neighbours(op)) {
        if (is_dag_node(g.type(n)))
            out.push_back({ n, false });
        else
            stack.push_back(n);
    }
    while (!stack.empty()) {
        const std::uint32_t c = stack.back();
        stack.pop_back();
        if (std::find(seen.begin(), seen.end(), c) != seen.end())
            continue;
        seen.push_back(c);
        for (std::uint32_t n : neighbours(c)) {
            if (is_dag_node(g.type(n))) {
                if (std::none_of(out.begin(), out.end(), [&](const DagEdge& e) { return e.from == n; }))
                    out.push_back({ n, true });
            } else if (seen.size() < kMaxFoldedOps) {
                stack.push_back(n);
            }
        }
    }
}

} // namespace

void dag_predecessors(const TimelineData& d, std::uint32_t op, std::vector<DagEdge>& out)
{
    const ExecutionGraph& g = d.graph();
    dag_neighbours(
        g, op, [&](std::uint32_t o) { return g.deps(o); }, out);
}

void dag_successors(const TimelineData& d, std::uint32_t op, std::vector<DagEdge>& out)
{
    dag_neighbours(
        d.graph(), op, [&](std::uint32_t o) { return d.successors(o); }, out);
}

std::vector<std::uint32_t> critical_compute_chain(const TimelineData& d)
{
    std::vector<std::uint32_t> chain;
    const ExecutionGraph& g = d.graph();
    for (std::uint32_t op : d.sim->result.critical_path)
        if (is_dag_node(g.type(op)))
            chain.push_back(op);
    return chain;
}

std::string PlanDifference::headline() const
{
    const double delta = delta_s();
    const double rel = step_a_s > 0 ? delta / step_a_s * 100.0 : 0.0;
    std::string s;
    char buf[160];
    if (std::fabs(delta) < 1e-12) {
        s = "B takes as long as A (" + format_duration(step_a_s) + ")";
    } else {
        std::snprintf(buf, sizeof buf, " (%+.1f%%)", rel);
        s = "B is " + format_duration(std::fabs(delta)) + (delta < 0 ? " faster" : " slower") + " than A" + buf;
    }
    int shown = 0;
    for (const Cause& c : causes) {
        if (shown == 4)
            break;
        s += shown == 0 ? ": " : ", ";
        s += c.what + " " + (c.delta_s() >= 0 ? "+" : "-") + format_duration(std::fabs(c.delta_s()));
        ++shown;
    }
    return s;
}

PlanDifference compare_plans(const TimelineData& a, const TimelineData& b)
{
    PlanDifference diff;
    diff.step_a_s = a.prediction.step_time_s;
    diff.step_b_s = b.prediction.step_time_s;
    const auto sa = timeline_summary(a.prediction);
    const auto sb = timeline_summary(b.prediction);
    for (std::size_t i = 0; i < sa.size() && i < sb.size(); ++i) {
        PlanDifference::Cause c { sa[i].label, sa[i].seconds, sb[i].seconds };
        if (std::fabs(c.delta_s()) > 1e-12 * std::max(1.0, std::max(diff.step_a_s, diff.step_b_s)))
            diff.causes.push_back(c);
    }
    std::stable_sort(
        diff.causes.begin(), diff.causes.end(), [](const PlanDifference::Cause& x, const PlanDifference::Cause& y) {
            return std::fabs(x.delta_s()) > std::fabs(y.delta_s());
        });
    if (a.info.strategy && b.info.strategy) {
        const Strategy &x = *a.info.strategy, &y = *b.info.strategy;
        auto num = [&](const char* name, long long u, long long v) {
            if (u != v)
                diff.strategy_changes.push_back(
                    std::string(name) + " " + std::to_string(u) + " -> " + std::to_string(v));
        };
        auto text = [&](const char* name, std::string_view u, std::string_view v) {
            if (u != v)
                diff.strategy_changes.push_back(std::string(name) + " " + std::string(u) + " -> " + std::string(v));
        };
        num("tp", x.tp, y.tp);
        num("pp", x.pp, y.pp);
        num("dp", x.dp, y.dp);
        num("cp", x.cp, y.cp);
        num("ep", x.ep, y.ep);
        num("vpp", x.vpp, y.vpp);
        num("micro-batch", x.micro_batch, y.micro_batch);
        num("zero", x.zero, y.zero);
        text("schedule", to_string(x.schedule), to_string(y.schedule));
        text("recompute", to_string(x.recompute), to_string(y.recompute));
        text("sequence parallel", x.sequence_parallel ? "on" : "off", y.sequence_parallel ? "on" : "off");
        text("optimizer offload", x.offload_optimizer ? "on" : "off", y.offload_optimizer ? "on" : "off");
        text("TP comm overlap", x.tp_comm_overlap ? "on" : "off", y.tp_comm_overlap ? "on" : "off");
    }
    return diff;
}

} // namespace parallax
