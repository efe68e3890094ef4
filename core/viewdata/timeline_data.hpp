#pragma once
// View data of the timeline and DAG views, built once from a simulated plan (no Qt): one row per
// device stream (compute, the TP/CP/EP collectives under compute passes, pipeline sends, data-parallel
// traffic), grouped by pipeline stage, each row's bars sorted by start so a view finds the visible
// range by binary search; bubbles, exposed communication and the critical path; identical stages
// collapsed by symmetry; the level-of-detail aggregation that reduces a row to one bin per pixel
// column without losing an op; the comparison of two plans. Adapts simulator results for drawing:
// no model maths here.
#include "sim/simulated_model.hpp"
#include "spec/prediction.hpp"
#include "spec/strategy.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace parallax {

struct Scenario;

// What a bar shows; the colour key of the views. The first values mirror IrOpType.
enum class TimelineKind : std::uint8_t {
    forward,
    backward_input,
    backward_weight,
    recompute,
    pp_send,
    dp_reduce,
    param_gather,
    zero3_gather,
    zero3_reduce_scatter,
    optimizer,
    offload,
    tp_comm,
    cp_comm,
    ep_comm,
    measured_kernel, // a measured trace's compute kernel or CPU op
    measured_comm, // a measured collective or copy
    measured_other,
};
inline constexpr int kTimelineKindCount = 17;
TimelineKind timeline_kind(IrOpType t);
const char* to_string(TimelineKind k); // "forward", "TP collectives", ...
const char* short_name(TimelineKind k); // "F", "B", "W", "R", "send", ...
bool is_communication(TimelineKind k);

enum class TimelineRowKind : std::uint8_t { compute, tp, cp, ep, pp, dp, measured };
inline constexpr int kTimelineRowKindCount = 7;
const char* to_string(TimelineRowKind k); // "compute", "TP", ...

struct TimelineInterval {
    double begin_s = 0;
    double end_s = 0;
};

// One bar. Bars of a row never overlap (a stream runs one op at a time), so sorting by start also
// sorts by end.
struct TimelineItem {
    double start_s = 0;
    double end_s = 0;
    std::uint32_t op = 0; // IR op; companion bars: the compute pass they run under; measured: name id
    TimelineKind kind = TimelineKind::forward;
    std::uint8_t slot = 0; // index of `kind` in the row's `kinds`
    std::uint8_t flags = 0;
    std::uint8_t shade = 0; // 0 base colour, 1.. lighter: the device's local model chunk (virtual stage)
    static constexpr std::uint8_t kCritical = 1; // on the simulated critical path
    static constexpr std::uint8_t kCompanion = 2; // TP/CP/EP traffic drawn under a compute pass
    double duration_s() const { return end_s - start_s; }
};

inline constexpr int kLodSlots = 6; // distinct kinds a row tells apart in its LOD bins

struct TimelineRow {
    int stage = 0; // pipeline stage (device); -1 for measured rows
    TimelineRowKind kind = TimelineRowKind::compute;
    std::string label; // measured rows: "pid 3 / stream 7"
    std::vector<TimelineItem> items; // sorted by start, disjoint
    std::vector<TimelineKind> kinds; // distinct kinds in this row, at most kLodSlots (the rest share the last slot)
    std::vector<TimelineInterval> exposed; // communication not hidden under compute, sorted, disjoint
    std::vector<TimelineInterval> bubbles; // compute rows: idle inside the pipeline (not waiting on a send)
    double busy_s = 0; // sum of item durations
    double exposed_s = 0; // sum of `exposed`
    // Longest item per block of kBlock items: a view looking for bars wide enough to label skips
    // whole blocks of narrow ones.
    static constexpr std::size_t kBlock = 64;
    std::vector<float> block_max_s;
    void index_blocks();

    std::size_t size() const { return items.size(); }
    // First item that ends after t (binary search): where drawing [t, ...) starts.
    std::size_t first_ending_after(double t) const;
    // The item under time t, or npos.
    std::size_t item_at(double t) const;
    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
};

// A pipeline stage as the views show it: its rows, the GPUs it stands for, and where its time goes.
struct TimelineStage {
    int stage = 0; // the representative stage
    std::vector<int> members; // identical stages collapsed into this one (symmetry), itself first
    long long gpus_per_stage = 1; // TP x CP x DP replicas one IR device stands for
    std::string hardware; // a heterogeneous plan's stage: its replicas' GPUs ("H100-SXM5-80GB tp4 + ...")
    std::string gpu_types; // and its GPU types, short ("H100+A100")
    std::vector<int> rows; // indices into TimelineData::rows, compute first
    double compute_s = 0; // F/B/W busy time (with the exposed TP/CP/EP inside the passes)
    double recompute_s = 0;
    double bubble_s = 0; // compute idle before the pipeline drains, not waiting on its own communication
    double comm_wait_s = 0; // compute idle while its own blocking send or parameter gather is in flight
    double tail_s = 0; // from the end of the pipeline to the end of the step (reduction, optimizer)
    double optimizer_s = 0;
    double exposed_comm_s = 0; // exposed communication of all its rows
    long long gpus() const { return gpus_per_stage * static_cast<long long>(members.size()); }
};

// One entry of the summary strip: the Prediction's time breakdown, in its order.
struct TimelineSummaryItem {
    std::string label;
    double seconds = 0;
    TimelineKind colour = TimelineKind::forward;
    bool is_bubble = false;
};
std::vector<TimelineSummaryItem> timeline_summary(const Prediction& p);

struct TimelinePlanInfo {
    std::string title; // the model and the plan's label (spec/strategy_label.hpp)
    std::optional<Strategy> strategy; // for GPUs per stage and the causes of a comparison
    bool collapse_identical_stages = true;
};
TimelinePlanInfo timeline_plan_info(const Scenario& s);

struct TimelineData {
    std::shared_ptr<const SimulatedPlan> sim;
    Prediction prediction;
    TimelinePlanInfo info;
    std::vector<TimelineRow> rows;
    std::vector<TimelineStage> stages; // display order
    double makespan_s = 0;
    double pipeline_end_s = 0; // last forward/backward pass of any stage
    int chunks_per_device = 1;
    // The stage with the most compute (F/B/W and recompute): it sets the pace, and the Prediction's
    // bubble is measured on it (its idle + its waits = bubble + exposed PP of the Prediction).
    int slowest_stage = 0;
    std::vector<std::uint8_t> critical; // per op
    std::vector<std::uint32_t> op_row, op_item; // per op: where its bar is (kNoRow when hidden)
    std::vector<std::uint32_t> succ_begin, succ; // successors (CSR), the reverse of graph deps
    std::vector<TimelineSummaryItem> summary;
    static constexpr std::uint32_t kNoRow = std::numeric_limits<std::uint32_t>::max();

    const ExecutionGraph& graph() const { return sim->lowered.graph; }
    std::size_t op_count() const { return critical.size(); }
    std::span<const std::uint32_t> successors(std::uint32_t op) const
    {
        return { succ.data() + succ_begin[op], succ.data() + succ_begin[op + 1] };
    }
    // Layers a compute op runs ([first, last]); {-1, -1} when not chunk-specific.
    std::pair<int, int> layers_of(std::uint32_t op) const;
    // "F L0-9 mb3" as the Chrome trace names it.
    std::string op_label(std::uint32_t op) const;
    // Multi-line description for a tooltip: pass, stage, chunk, layers, micro-batch, FLOPs, bytes,
    // duration, start/end, critical path.
    std::string describe(const TimelineRow& row, const TimelineItem& item) const;
    long long total_gpus() const;
};

// Builds the view data (a copy of nothing but indices: the plan is shared). Long for 10^6 ops
// (~0.1 s): callers may run it off the GUI thread; the result is immutable.
std::shared_ptr<const TimelineData> build_timeline_data(
    std::shared_ptr<const SimulatedPlan> sim, const Prediction& prediction, const TimelinePlanInfo& info = {});

// Level of detail: one bin per pixel column. Every item overlapping the range adds its overlap to
// the bins it covers (busy sums equal the items' durations), and is counted once, in the bin where
// it starts (or the first bin when it starts before the range), so nothing is lost at any zoom.
struct LodBin {
    double busy_s = 0; // exact: the bins of a range sum to the items' durations in it
    float exposed_s = 0;
    float bubble_s = 0;
    float slot_busy[kLodSlots] = {};
    float top_overlap = 0;
    std::uint32_t ops = 0;
    std::uint32_t top_item = std::numeric_limits<std::uint32_t>::max(); // item with the largest overlap
    bool critical = false;
    int dominant_slot() const;
};
// Fills `bins` for [t_begin, t_begin + bins.size() * bin_s). Returns the number of items it visited.
std::size_t aggregate_row(const TimelineRow& row, double t_begin, double bin_s, std::span<LodBin> bins);

// The compute passes a compute op waits for, with communication ops (sends, gathers) folded into the
// edge: the DAG view's edges at stage x micro-batch-chunk granularity.
struct DagEdge {
    std::uint32_t from = 0;
    bool via_communication = false;
};
void dag_predecessors(const TimelineData& d, std::uint32_t op, std::vector<DagEdge>& out);
void dag_successors(const TimelineData& d, std::uint32_t op, std::vector<DagEdge>& out); // edges out, `from` = target
// The compute ops of the critical path in order (communication and barriers dropped).
std::vector<std::uint32_t> critical_compute_chain(const TimelineData& d);

// Plan B against plan A: the step-time difference and where it comes from (the Prediction's time
// breakdown, whose parts sum to the step time, so the causes sum to the difference).
struct PlanDifference {
    struct Cause {
        std::string what;
        double a_s = 0;
        double b_s = 0;
        double delta_s() const { return b_s - a_s; }
    };
    double step_a_s = 0;
    double step_b_s = 0;
    std::vector<Cause> causes; // largest |delta| first, zero deltas dropped
    std::vector<std::string> strategy_changes; // "pp 4 -> 8", "schedule 1f1b -> interleaved"
    double delta_s() const { return step_b_s - step_a_s; }
    std::string headline() const; // "B is 1.23 s faster than A (-8.6%): bubble -1.10 s, ..."
};
PlanDifference compare_plans(const TimelineData& a, const TimelineData& b);

// "12.5 ms", "340 us", "1.20 s": a duration with a unit chosen for it.
std::string format_duration(double seconds);
std::string format_si(double value, const char* unit); // "1.2 TFLOP", "3.4 GB"

} // namespace parallax
