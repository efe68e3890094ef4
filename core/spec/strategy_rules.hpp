#pragma once
// The validity rules of a plan: one source of truth for the scenario validator, the search and the
// GUI's snapping. check_strategy() is allocation-free (the search calls it millions of times);
// explain() turns a violation into the message a user reads.
#include "spec/gpu_spec.hpp"
#include "spec/model_spec.hpp"
#include "spec/strategy.hpp"
#include "spec/training_spec.hpp"

#include <string>
#include <vector>

namespace parallax {

enum class Rule : unsigned char {
    ok,
    gpu_count, // tp*pp*dp*cp must equal the cluster's GPUs
    tp_heads,
    tp_kv_heads,
    tp_ffn,
    expert_tp_ffn,
    cp_seq,
    cp_heads_all_to_all,
    too_few_layers, // fewer layers than pipeline chunks
    stage_overrides, // first/last stage layers do not fit
    vpp_needs_pp,
    vpp_needs_interleaved,
    interleaved_needs_vpp,
    batch_divisible, // global_batch % (micro_batch*dp)
    interleaved_microbatches, // micro-batches a multiple of pp (Megatron)
    zb_microbatches,
    dualpipe_pp_even,
    dualpipe_microbatches,
    program_fits, // a custom schedule's program runs pp stages and the step's micro-batches
    ep_needs_moe,
    ep_experts,
    ep_ranks, // ep must divide dp*cp (EP reuses DP x CP ranks)
    expert_tp_ranks,
    precision_unsupported,
    offload_needs_zero,
    gradient_release_accumulation, // gradient release cannot accumulate over micro-batches
    ep_overlap_needs_moe, // batch-level EP overlap hides one micro-batch's all-to-all under another's compute
    offload_params_needs_zero3, // parameter offload (ZeRO-Infinity) fetches sharded parameters layer by layer
    fp32_reduce_without_zero, // DeepSpeed reduces gradients in fp32 (fp32_allreduce) only without ZeRO
    recompute_modules_megatron, // recomputation by submodule is Megatron's selective policy
    bf16_gradients_megatron, // 16-bit gradient buffers: Megatron's switch, with 16-bit parameters, not with fp32
                             // reduction
};

struct PlanInputs {
    const ModelSpec& model;
    const TrainingSpec& training;
    const GpuSpec& gpu;
    long long total_gpus;
};

Rule check_strategy(const PlanInputs& in, const Strategy& s) noexcept;
// Whether one rule holds (for controls that toggle one setting).
bool rule_holds(Rule r, const PlanInputs& in, const Strategy& s) noexcept;
// All violated rules, for the GUI (to mark every offending control at once).
std::vector<Rule> all_violations(const PlanInputs& in, const Strategy& s);
// Key path of the setting the rule is about, e.g. "strategy.tp".
const char* rule_key(Rule r);
const char* rule_key(Rule r, const Strategy& s); // names the key the user actually set

// A sentence with the numbers: "tensor parallel degree 6 must divide the 64 attention heads".
std::string explain(Rule r, const PlanInputs& in, const Strategy& s);
// Things that are valid but worth saying (uneven stages, settings without effect).
std::vector<std::string> strategy_warnings(const PlanInputs& in, const Strategy& s);

long long microbatch_count(const TrainingSpec& t, const Strategy& s);

} // namespace parallax
