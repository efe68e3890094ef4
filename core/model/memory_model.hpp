#pragma once
// Memory per GPU of one pipeline stage: weights, gradients and optimizer states per ZeRO stage and
// optimizer, activations of the micro-batches the schedule keeps in flight, and the rest (CUDA
// context, communication buffers, allocator fragmentation).
#include "model/plan_context.hpp"
#include "model/plan_layout.hpp"
#include "spec/layer_ranges.hpp"

#include "spec/prediction.hpp"
#include "spec/strategy.hpp"
#include <array>

namespace parallax {

// Parameters held by one GPU of a stage, split by how they are sharded.
struct StageParams {
    double dense = 0; // replicated across dp*cp (attention, dense MLP, shared experts, norms, embeddings)
    double expert = 0; // replicated across the expert-data-parallel group
    double total() const { return dense + expert; }
};

StageParams stage_params(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage) noexcept;

// Bytes per parameter of each model-state part, before sharding.
struct StateBytes {
    double weights = 2; // bf16/fp16 working copy
    double gradients = 4; // fp32 main gradients (Megatron accumulates bf16 training in fp32)
    double optimizer = 12; // fp32 master weights + Adam's two moments
};
StateBytes state_bytes(const TrainingSpec& t, const Strategy& s) noexcept;
// Bytes per parameter the data-parallel gradient reduction moves: the gradients' own element, or fp32
// when the training reduces in fp32.
double grad_reduce_bytes_per_param(const TrainingSpec& t, const StateBytes& state) noexcept;
// Weight bytes per parameter a checkpoint saves: the 16-bit copy (the fp32 master travels with the
// optimizer states), or the fp32 weights of fp32 training.
double checkpoint_weight_bytes(const TrainingSpec& t) noexcept;

// Micro-batches whose activations a stage holds at its peak, in units of "one micro-batch through
// all of this stage's layers" (so interleaving gives fractions above 1 per micro-batch in flight).
double in_flight_microbatches(const Strategy& s, int stage, long long microbatches) noexcept;

// Activation bytes of one layer and one micro-batch (layer_ops.hpp: layer_activation_bytes).
struct LayerActivationBytes {
    double dense = 0; // stored for the backward under the strategy's recompute setting
    double moe = 0;
    double working = 0; // full activations of the largest layer: alive while it is recomputed
    double dense_host = 0; // `dense` offloaded: host memory of its pinned blocks (layer_saved_bytes)
    double moe_host = 0;
};

// Activation offload: layers whose activations stay on the GPU as copy buffers, the one going out to host
// memory and the one coming back ahead of its backward (Transformer Engine's offload handler double-buffers).
inline constexpr double kOffloadBufferLayers = 2;

// One GPU's parameters of a stage of a composite plan, by the variant of the layer they belong to (the
// embedding with layer 0's, the output layer and final norm with the last layer's): ranges may set their
// own precision (bytes per weight) and expert TP (how experts are split and sharded).
struct CompositeParams {
    std::array<double, kMaxLayerSettings> dense {};
    std::array<double, kMaxLayerSettings> expert {};
    StageParams total() const noexcept;
};
CompositeParams composite_stage_params(
    const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage, const LayerVariants& v) noexcept;
// The expert-data-parallel ranks an expert's parameters are sharded over at expert TP `expert_tp`.
double expert_shard_ranks(const Strategy& s, int expert_tp) noexcept;

// A composite plan's layers (Strategy::layers): the distinct settings they run under and the activation
// bytes of each (index: variant).
struct CompositeLayers {
    const LayerVariants* variants = nullptr;
    const LayerActivationBytes* activations = nullptr;
};

// `composite` (a composite plan): each layer counted under its range's setting (its activations, and its
// weights at its precision); null for a plain plan.
MemoryBreakdown stage_memory(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    long long microbatches, const LayerActivationBytes& act, const CompositeLayers* composite = nullptr) noexcept;

// Bytes per parameter of the weights a GPU keeps for matmuls at `p`: the 16-bit working copy, plus the
// cached fp8/fp4 copy of low-precision training; the fp32 weights themselves in fp32 training.
double weight_bytes_per_param(Precision p) noexcept;

} // namespace parallax
