#pragma once
// Memory per GPU of one pipeline stage: weights, gradients and optimizer states per ZeRO stage and
// optimizer, activations of the micro-batches the schedule keeps in flight, and the rest (CUDA
// context, communication buffers, allocator fragmentation).
#include "model/plan_context.hpp"
#include "model/plan_layout.hpp"
#include "spec/prediction.hpp"
#include "spec/strategy.hpp"

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
};

// Activation offload: layers whose activations stay on the GPU as copy buffers, the one going out to host
// memory and the one coming back ahead of its backward (Transformer Engine's offload handler double-buffers).
inline constexpr double kOffloadBufferLayers = 2;

// `by_recompute` (a composite plan, Strategy::layers): the activation bytes of each recompute setting
// (index: Recompute), each layer counted under its range's setting; null for a plain plan.
MemoryBreakdown stage_memory(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    long long microbatches, const LayerActivationBytes& act,
    const LayerActivationBytes* by_recompute = nullptr) noexcept;

} // namespace parallax
