#pragma once
// Everything about one model instance that does not depend on the load: the GPU's compute model, the
// fabric, the engine's traits and where the instance's process groups land. Built once per
// prediction; the step model and the memory model read it.
#include "model/collective_model.hpp"
#include "model/compute_model.hpp"
#include "model/power_model.hpp"
#include "serving/engine_traits.hpp"
#include "serving/serving_spec.hpp"

#include <memory>
#include <vector>

namespace parallax {

struct ServingContext {
    const ModelSpec* model = nullptr;
    const ClusterSpec* cluster = nullptr;
    ServingPrecision precision;
    InstanceLayout layout;
    EngineTraits engine;
    ComputeDevice device;
    NetworkModel network;
    PowerModel power;
    Precision matmul_precision = Precision::bf16; // what the tensor cores run (weight-only below the GPU's best)
    double weight_bytes_per_param = 2; // storage incl. block scales
    GroupPlacement tp_group; // the attention's tensor-parallel ranks
    GroupPlacement moe_group; // the tp x attention_dp ranks that share an MoE layer
    GroupPlacement ep_group;
    GroupPlacement pp_hop; // two neighbouring pipeline stages
    // The layers whose step cost is the same: a layer's cost depends only on whether it is an MoE layer
    // and whether its attention is windowed (layer_params, is_windowed_layer), so a step costs each
    // kind once, times its count.
    struct LayerKind {
        int first_layer = 0; // a layer of this kind
        int count = 0;
    };
    std::vector<LayerKind> layer_kinds;
    // Speculative decoding (serving.speculative): the draft, one layer of its own kind on the same layout,
    // and what a request gains per step; without it a step gains one token and there is no draft.
    std::optional<SpeculativeDecoding> speculative;
    double tokens_per_decode_step = 1;
    double decode_queries = 1; // tokens each decoding request runs through the model: 1, or k + 1 to verify
    std::unique_ptr<const ModelSpec> draft_model;
    std::unique_ptr<const ServingContext> draft;

    ServingContext(const ModelSpec& m, const ClusterSpec& c, const ServingSpec& s, const InstanceLayout& l);
    ~ServingContext();
    ServingContext(const ServingContext&) = delete;
    ServingContext& operator=(const ServingContext&) = delete;
};

// Bytes per element of a tensor stored at `p`, with its block scales (NVFP4: one fp8 scale per 16).
double stored_bytes_per_element(Precision p);

// Tokens one step of the whole instance processes: every attention-DP rank's budget.
double instance_token_budget(const ServingContext& ctx);

// Steps a request decodes for: its osl - 1 tokens after the first, one per step, or the mean a step gains
// with speculative decoding.
double decode_steps_of(const ServingContext& ctx, const ServingWorkload& w);

// The model's layers grouped by kind (MoE or dense, windowed or full attention), in order of kind.
std::vector<ServingContext::LayerKind> serving_layer_kinds(const ModelSpec& m);

// `size` consecutive ranks starting at a node boundary, `stride` ranks apart.
GroupPlacement contiguous_group(long long size, long long stride, long long gpus_per_node);

} // namespace parallax
