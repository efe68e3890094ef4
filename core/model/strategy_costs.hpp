#pragma once
// Costs of one strategy at layer, chunk and stage level, computed once and shared by the analytic
// model, the IR lowering and the search: group placement on the topology, per-layer op totals,
// per-chunk timing per micro-batch, and the per-stage tail (DP reduction, optimizer step).
#include "model/analytic_model.hpp"
#include "model/layer_ops.hpp"
#include "model/memory_model.hpp"
#include "model/plan_layout.hpp"
#include "model/power_curves.hpp"
#include "model/topology.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/software_stack.hpp"

#include <array>
#include <memory>
#include <unordered_map>

namespace parallax {

// ZeRO-3 / FSDP all-gather the bf16 working copy of the parameters.
inline constexpr double kGatherBytesPerParam = 2;
// fp32 training gathers the fp32 parameters themselves (no 16-bit working copy exists).
constexpr double gather_bytes_per_param(Precision p)
{
    return is_full_precision(p) ? element_bytes(p) : kGatherBytesPerParam;
}

struct Groups {
    GroupPlacement tp, cp, ep, etp, dp_dense, dp_expert, pp_pair;
};

// Per-layer costs of a strategy: depend on the layer-level degrees (tp, cp, ep, micro-batch, SP,
// recompute...) and where their groups land, not on pp, dp or the schedule.
struct LayerCosts {
    LayerTotals dense, moe, embedding, output;
    double p2p_s = 0; // one activation transfer between neighbouring stages
    int p2p_transfers = 2; // blocking transfers per micro-batch per stage (fwd + bwd)
    LayerActivationBytes activations;
};

// Layer costs with their power curves, as the evaluation cache keeps them. The curves start with the
// nominal clock's level alone; ladder() builds the other clocks the first time an evaluation needs them.
struct LayerEntry {
    LayerCosts costs; // p2p_s left 0: it depends on where pipeline neighbours sit (compute_costs adds it)
    LayerCurves curves;
    Strategy strategy; // the layer-level degrees the entry was built for
    Groups groups;
    Precision precision = Precision::bf16; // the matmuls' (a composite plan's range may have its own)
    const LayerCurves& ladder(const PlanContext& ctx);
};

// Costs of one strategy, computed once per evaluation and reused for every stage.
struct StrategyCosts {
    Groups groups;
    LayerCosts layer;
    const PlanLayout* layout = nullptr;
    const LayerCurves* curves = nullptr; // per-pass time and energy over clocks (power_curves.hpp), owned by the cache
    LayerEntry* entry = nullptr; // where `curves` live (the cache's entry), so the other clocks can be built
    // The curves with every clock level (built on first use); `curves` is enough at the nominal clock.
    const LayerCurves& curves_at(const PlanContext& ctx, double clock) const;
    // Composite plans (strategy.layers): the ranges, the distinct settings their layers run under, and
    // the layer entry of each (index: variant). A plain plan leaves `ranges` null and costs every layer
    // with `layer`.
    const LayerRanges* ranges = nullptr;
    LayerVariants variants;
    std::array<LayerEntry*, kMaxLayerSettings> by_variant {};
    // The entry layer `layer` is costed with (composite plans only).
    LayerEntry& entry_of_layer(int layer) const;
};

// The setting a plan's layers run under without ranges: its recompute, the training's precision, its
// expert TP.
LayerSetting plain_layer_setting(const PlanContext& ctx, const Strategy& s) noexcept;
// The strategy a layer of setting `v` is costed with: the plan's, with the setting's recompute and expert TP,
// and for a setting of its own TP or CP the stage's ranks regrouped (tp, cp, dp and micro-batch its own).
Strategy strategy_of_setting(const Strategy& s, const LayerSetting& v) noexcept;
// A setting holding only the plan's own TP and CP (for LayerSetting::same_layout).
LayerSetting plain_layout_of(const Strategy& s) noexcept;

// Layers [first, first + count) of a composite plan by the variant they run under.
struct LayerMix {
    std::array<int, kMaxLayerSettings> dense {};
    std::array<int, kMaxLayerSettings> moe {};
};
LayerMix layer_mix(const ModelSpec& m, const StrategyCosts& c, int first, int count) noexcept;
// Whether a kernel of any layer entry the plan uses is at the power cap at the nominal clock.
bool throttled_at_nominal(const StrategyCosts& c) noexcept;
// The activation bytes of each variant a composite plan uses (entries left zero otherwise).
std::array<LayerActivationBytes, kMaxLayerSettings> activations_by_variant(const StrategyCosts& c) noexcept;
// The GPU's dense peak the plan's matmuls run at (FLOP/s): the training precision's, or for a composite
// plan whose ranges differ in precision the rate that gives the same time at 100% utilisation over its
// layers' executed FLOPs (a harmonic mean weighted by those FLOPs).
double plan_peak_flops(const PlanContext& ctx, const StrategyCosts& c) noexcept;

// An exact cache key: the fields themselves, compared in full (a hash of them alone can collide).
template <std::size_t N> struct ExactKey {
    std::array<long long, N> v {};
    bool operator==(const ExactKey&) const = default;
};
struct ExactKeyHash {
    template <std::size_t N> std::size_t operator()(const ExactKey<N>& k) const noexcept
    {
        unsigned long long h = 0;
        for (long long x : k.v) // splitmix64-style combine: spreads the buckets; equality decides
            h ^= static_cast<unsigned long long>(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        return static_cast<std::size_t>(h);
    }
};

// Caches layouts and layer costs across evaluations of one plan context, so the search evaluates
// millions of strategies without recomputing per-layer op lists or touching the heap once warm.
// Not thread-safe: one per thread.
class EvaluationCache {
public:
    explicit EvaluationCache(const PlanContext& ctx);
    const PlanLayout& layout(const Strategy& s);
    LayerEntry& layer_entry(const Strategy& s, const Groups& g);
    // A layer of a composite plan's range whose matmuls run at `p` (not the training's precision).
    LayerEntry& layer_entry(const Strategy& s, const Groups& g, Precision p);
    // Activation bytes per layer (closed form, no op lists): what a memory check needs.
    const LayerActivationBytes& activations(const Strategy& s);
    const LayerActivationBytes& activations(const Strategy& s, Precision p);
    std::size_t layouts() const { return m_layouts.size(); }
    std::size_t layer_entries() const { return m_layers.size(); }
    // At most this many layer entries are kept (~40 MiB per cache, one cache per search thread).
    static constexpr std::size_t kMaxLayerEntries = 8192;

private:
    // The strategy fields per-layer costs depend on; with the four groups' placements.
    static constexpr std::size_t kLayerFields = 11;
    static constexpr std::size_t kPlacementFields = 4;
    using LayoutKey = ExactKey<6>;
    using ActivationKey = ExactKey<kLayerFields>;
    using LayerKey = ExactKey<kLayerFields + 4 * kPlacementFields>;
    const PlanContext& m_ctx;
    std::unordered_map<LayoutKey, std::unique_ptr<PlanLayout>, ExactKeyHash> m_layouts;
    std::unordered_map<LayerKey, std::unique_ptr<LayerEntry>, ExactKeyHash> m_layers;
    std::unordered_map<ActivationKey, LayerActivationBytes, ExactKeyHash> m_activations;
};

Groups place_groups(const PlanContext& ctx, const Strategy& s) noexcept;
LayerCosts compute_layer_costs(const PlanContext& ctx, const Strategy& s, const Groups& g) noexcept;
// Activation bytes of the layer kinds per micro-batch under the strategy's recompute setting.
LayerActivationBytes compute_layer_activations(const PlanContext& ctx, const Strategy& s) noexcept;
LayerActivationBytes compute_layer_activations(const PlanContext& ctx, const Strategy& s, Precision p) noexcept;
// The pipeline's activation exchange between neighbouring stages (fills p2p_s and p2p_transfers).
void add_pipeline_p2p(const PlanContext& ctx, const Strategy& s, const Groups& g, LayerCosts& c) noexcept;
// Bytes one of `tp` ranks moves in an average blocking pipeline transfer: the stage output forward
// (1/tp of it when split, plus any mask the engine sends with it) and its gradient backward (split
// likewise where the engine splits gradients); stages exchange as many of each per micro-batch.
double p2p_transfer_bytes(const SoftwareTraits& traits, double activation_bytes, double seq_len, int tp, bool split,
    bool sequence_parallel) noexcept;
// Per-pass time and energy of the layer kinds over the context's clock ladder, at its power cap.
LayerCurves compute_layer_curves(
    const PlanContext& ctx, const Strategy& s, const Groups& g, ClockLevels levels = ClockLevels::ladder) noexcept;
LayerCurves compute_layer_curves(
    const PlanContext& ctx, const Strategy& s, const Groups& g, ClockLevels levels, Precision p) noexcept;
// Fills `c` using the cache (layout and layer costs); the layout stays owned by the cache.
void compute_costs(const PlanContext& ctx, const Strategy& s, EvaluationCache& cache, StrategyCosts& c);

// One model chunk (a contiguous block of layers on one stage), one micro-batch.
struct ChunkTiming {
    int first_layer = 0;
    int layers = 0;
    int moe_layers = 0;
    bool has_embedding = false;
    bool has_output = false;
    double forward_s = 0; // compute + exposed forward communication (no p2p)
    double backward_input_s = 0; // B incl. exposed backward communication
    double weight_s = 0; // W
    double recompute_s = 0; // runs right before B
    double compute_s = 0; // forward + B + W compute, without recompute and communication
    double exposed_s[kOpStreamCount] = {};
    double comm_busy_s[kOpStreamCount] = {};
    double flops = 0; // executed, incl. recompute
    double host_copy_s = 0; // exposed copies to and from host memory (offload), in forward_s and backward_input_s
};

ChunkTiming chunk_timing(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int chunk) noexcept;
// Sum of the stage's chunks plus its pipeline sends, per micro-batch.
StageTiming stage_timing_of(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept;
// Pipeline exchange time added per micro-batch per direction for one chunk of a stage.
double p2p_per_direction_s(const Strategy& s, const StrategyCosts& c, int stage) noexcept;

// What a stage does after its last backward: gradient reduction (and parameter gather of the
// distributed optimizer), the optimizer step, ZeRO-Offload transfers.
struct StageTail {
    double params = 0;
    double grad_reduce_s = 0;
    double param_gather_s = 0;
    double last_bucket_fraction = 1; // of grad_reduce_s that cannot overlap (the last bucket)
    double optimizer_s = 0;
    double offload_s = 0;
    // Optimizer offload under gradient accumulation: each micro-batch's 16-bit gradient partition goes down
    // and the host's running sum comes back (both directions at once), overlapping that micro-batch's backward.
    double accumulate_copy_s = 0;
};
StageTail stage_tail(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept;
// Parameters per data-parallel gradient bucket: the first stage's last bucket cannot overlap the backward,
// nor its first parameter gather the forward.
double ddp_bucket_params(const TrainingSpec& t, const Strategy& s) noexcept;

// ZeRO-3 / FSDP per-micro-batch traffic of a stage: all-gathers before forward and backward,
// reduce-scatter after, one collective per layer unit.
struct Zero3Traffic {
    double gather_s = 0; // per pass (forward or backward)
    double reduce_scatter_s = 0;
    double units = 1;
};
Zero3Traffic zero3_traffic(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept;

int moe_layers_in(const ModelSpec& m, int first, int count);
StageParams stage_params(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept;

} // namespace parallax
