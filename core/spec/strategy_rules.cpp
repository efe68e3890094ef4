#include "spec/strategy_rules.hpp"

#include "ir/schedule_program.hpp"
#include "model/stage_layout.hpp"

#include <iterator>
#include <string>
#include <utility>

namespace parallax {

long long microbatch_count(const TrainingSpec& t, const Strategy& s)
{
    const long long per_step = static_cast<long long>(s.micro_batch) * s.dp;
    return per_step > 0 ? t.global_batch / per_step : 0;
}

namespace {

StageLayout layout_of(const ModelSpec& m, const Strategy& s)
{
    return StageLayout { m.layers, s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers };
}

// Evaluates one rule; true when it holds. Always inlined: with a constant rule (check_strategy) the
// switch folds away and the rules run as straight-line code.
[[gnu::always_inline]] inline bool holds(Rule r, const PlanInputs& in, const Strategy& s) noexcept
{
    const ModelSpec& m = in.model;
    // Computed only by the rules that need it (a search checks every candidate against every rule).
    auto mb = [&] { return microbatch_count(in.training, s); };
    switch (r) {
    case Rule::ok:
        return true;
    case Rule::gpu_count:
        return s.total_gpus() == in.total_gpus;
    case Rule::tp_heads:
        return m.heads % s.tp == 0;
    case Rule::tp_kv_heads:
        return m.mla.has_value() || m.kv_heads % s.tp == 0;
    case Rule::tp_ffn:
        return m.ffn_hidden % s.tp == 0;
    case Rule::expert_tp_ffn:
        return !m.is_moe() || m.moe->expert_ffn_hidden % s.effective_expert_tp() == 0;
    case Rule::cp_seq:
        // Load-balanced causal CP splits the sequence into 2*cp chunks (Megatron/TE).
        return s.cp == 1 || in.training.seq_len % (2LL * s.cp) == 0;
    case Rule::cp_heads_all_to_all:
        return s.cp == 1 || s.cp_kind != CpKind::all_to_all || (m.heads / s.tp) % s.cp == 0;
    case Rule::too_few_layers: {
        if (s.first_stage_layers > 0 || s.last_stage_layers > 0)
            return true; // checked by stage_overrides
        return static_cast<long long>(m.layers) >= static_cast<long long>(s.pp) * s.vpp;
    }
    case Rule::stage_overrides: {
        if (s.first_stage_layers <= 0 && s.last_stage_layers <= 0)
            return true;
        if (s.pp < 2)
            return false;
        // Every chunk needs a layer: more chunks than layers can never work (and must not be looped over).
        if (static_cast<long long>(s.pp) * s.vpp > m.layers)
            return false;
        const long long fixed = static_cast<long long>(s.first_stage_layers) + s.last_stage_layers;
        if (fixed > m.layers)
            return false;
        // With every stage fixed (two stages, both given) nothing takes the rest: they must add up.
        const int free_stages = s.pp - (s.first_stage_layers > 0 ? 1 : 0) - (s.last_stage_layers > 0 ? 1 : 0);
        if (free_stages == 0 && fixed != m.layers)
            return false;
        return !layout_of(m, s).has_empty_chunk();
    }
    case Rule::vpp_needs_pp:
        return s.vpp == 1 || s.pp > 1;
    case Rule::vpp_needs_interleaved:
        return s.vpp == 1 || s.schedule == Schedule::interleaved || s.schedule == Schedule::custom;
    case Rule::interleaved_needs_vpp:
        return s.schedule != Schedule::interleaved || s.vpp > 1;
    case Rule::batch_divisible:
        return in.training.global_batch % (static_cast<long long>(s.micro_batch) * s.dp) == 0 && mb() >= 1;
    case Rule::interleaved_microbatches:
        return s.schedule != Schedule::interleaved || mb() % s.pp == 0;
    case Rule::zb_microbatches:
        return s.schedule != Schedule::zb_h1 || mb() >= s.pp;
    case Rule::dualpipe_pp_even:
        return s.schedule != Schedule::dualpipe || (s.pp >= 2 && s.pp % 2 == 0);
    case Rule::dualpipe_microbatches:
        // DualPipe feeds micro-batches from both ends: an even count, at least 2 * pp of them
        // (deepseek-ai/DualPipe asserts num_chunks >= 2 * num_ranks).
        return s.schedule != Schedule::dualpipe || (mb() % 2 == 0 && mb() >= 2LL * s.pp);
    case Rule::program_fits:
        return s.schedule != Schedule::custom
            || (s.program && static_cast<int>(s.program->stages.size()) == s.pp && s.program->microbatches == mb());
    case Rule::ep_needs_moe:
        return s.ep == 1 || m.is_moe();
    case Rule::ep_experts:
        return s.ep == 1 || !m.is_moe() || m.moe->experts % s.ep == 0;
    case Rule::ep_ranks:
        // EP reuses the DP x CP ranks while the experts keep the dense TP; with an explicit expert TP the
        // expert grid (expert_tp x ep x expert-dp) folds over all tp x cp x dp ranks of a stage instead
        // (MoE parallel folding, Liu et al. 2025), checked by expert_tp_ranks.
        return s.expert_tp > 0 || (static_cast<long long>(s.dp) * s.cp) % s.ep == 0;
    case Rule::expert_tp_ranks:
        return s.expert_tp == 0
            || (static_cast<long long>(s.tp) * s.dp * s.cp) % (static_cast<long long>(s.effective_expert_tp()) * s.ep)
            == 0;
    case Rule::precision_unsupported:
        return in.gpu.supports(in.training.precision);
    case Rule::offload_needs_zero:
        return !s.offload_optimizer || s.zero >= 1;
    case Rule::gradient_release_accumulation:
        return !s.gradient_release || (mb() == 1 && s.pp == 1);
    case Rule::ep_overlap_needs_moe:
        return !s.ep_overlap || (m.is_moe() && s.ep > 1 && mb() >= 2);
    case Rule::offload_params_needs_zero3:
        return !s.offload_params || s.zero >= 3;
    case Rule::fp32_reduce_without_zero:
        // DeepSpeed's engine asserts "ZeRO does not support 'fp32_allreduce': true" (runtime/engine.py).
        return !in.training.grad_reduce_in_fp32 || in.training.framework != Framework::megatron_deepspeed
            || s.zero == 0;
    case Rule::recompute_modules_megatron:
        return s.recompute != Recompute::selective || s.recompute_modules == kDefaultRecomputeModules
            || in.training.framework == Framework::megatron;
    case Rule::bf16_gradients_megatron:
        return !in.training.grad_reduce_in_bf16
            || (in.training.framework == Framework::megatron && !is_full_precision(in.training.precision)
                && !in.training.grad_reduce_in_fp32);
    }
    return true;
}

constexpr Rule kRules[] = {
    Rule::gpu_count,
    Rule::tp_heads,
    Rule::tp_kv_heads,
    Rule::tp_ffn,
    Rule::expert_tp_ffn,
    Rule::cp_seq,
    Rule::cp_heads_all_to_all,
    Rule::too_few_layers,
    Rule::stage_overrides,
    Rule::vpp_needs_pp,
    Rule::vpp_needs_interleaved,
    Rule::interleaved_needs_vpp,
    Rule::batch_divisible,
    Rule::interleaved_microbatches,
    Rule::zb_microbatches,
    Rule::dualpipe_pp_even,
    Rule::dualpipe_microbatches,
    Rule::program_fits,
    Rule::ep_needs_moe,
    Rule::ep_experts,
    Rule::ep_ranks,
    Rule::expert_tp_ranks,
    Rule::precision_unsupported,
    Rule::offload_needs_zero,
    Rule::gradient_release_accumulation,
    Rule::ep_overlap_needs_moe,
    Rule::offload_params_needs_zero3,
    Rule::fp32_reduce_without_zero,
    Rule::recompute_modules_megatron,
    Rule::bf16_gradients_megatron,
};

std::string n(long long v)
{
    return std::to_string(v);
}

} // namespace

bool rule_holds(Rule r, const PlanInputs& in, const Strategy& s) noexcept
{
    return holds(r, in, s);
}

namespace {

// The first rule of kRules that fails, each rule expanded in place (a search checks every candidate).
template <std::size_t... I>
Rule first_violation(const PlanInputs& in, const Strategy& s, std::index_sequence<I...>) noexcept
{
    Rule out = Rule::ok;
    static_cast<void>(((holds(kRules[I], in, s) || (out = kRules[I], false)) && ...));
    return out;
}

} // namespace

Rule check_strategy(const PlanInputs& in, const Strategy& s) noexcept
{
    return first_violation(in, s, std::make_index_sequence<std::size(kRules)>());
}

std::vector<Rule> all_violations(const PlanInputs& in, const Strategy& s)
{
    std::vector<Rule> out;
    for (Rule r : kRules)
        if (!holds(r, in, s))
            out.push_back(r);
    return out;
}

const char* rule_key(Rule r, const Strategy& s)
{
    if (r == Rule::stage_overrides && s.first_stage_layers <= 0 && s.last_stage_layers > 0)
        return "strategy.last_stage_layers";
    return rule_key(r);
}

const char* rule_key(Rule r)
{
    switch (r) {
    case Rule::ok:
        return "";
    case Rule::gpu_count:
        return "strategy.dp";
    case Rule::tp_heads:
    case Rule::tp_kv_heads:
    case Rule::tp_ffn:
        return "strategy.tp";
    case Rule::expert_tp_ffn:
    case Rule::expert_tp_ranks:
        return "strategy.expert_tp";
    case Rule::cp_seq:
    case Rule::cp_heads_all_to_all:
        return "strategy.cp";
    case Rule::too_few_layers:
        return "strategy.pp";
    case Rule::stage_overrides:
        return "strategy.first_stage_layers";
    case Rule::vpp_needs_pp:
    case Rule::vpp_needs_interleaved:
        return "strategy.vpp";
    case Rule::interleaved_needs_vpp:
    case Rule::interleaved_microbatches:
    case Rule::zb_microbatches:
    case Rule::dualpipe_pp_even:
    case Rule::dualpipe_microbatches:
        return "strategy.schedule";
    case Rule::program_fits:
        return "strategy.schedule_program";
    case Rule::batch_divisible:
        return "training.global_batch";
    case Rule::ep_needs_moe:
    case Rule::ep_experts:
    case Rule::ep_ranks:
        return "strategy.ep";
    case Rule::precision_unsupported:
        return "training.precision";
    case Rule::offload_needs_zero:
        return "strategy.offload_optimizer";
    case Rule::gradient_release_accumulation:
        return "strategy.gradient_release";
    case Rule::ep_overlap_needs_moe:
        return "strategy.ep_overlap";
    case Rule::offload_params_needs_zero3:
        return "strategy.offload_params";
    case Rule::fp32_reduce_without_zero:
        return "training.grad_reduce_in_fp32";
    case Rule::recompute_modules_megatron:
        return "strategy.recompute_modules";
    case Rule::bf16_gradients_megatron:
        return "training.grad_reduce_in_bf16";
    }
    return "";
}

std::string explain(Rule r, const PlanInputs& in, const Strategy& s)
{
    const ModelSpec& m = in.model;
    const long long mb = microbatch_count(in.training, s);
    switch (r) {
    case Rule::ok:
        return "ok";
    case Rule::gpu_count:
        return "tp*pp*dp*cp = " + n(s.tp) + "*" + n(s.pp) + "*" + n(s.dp) + "*" + n(s.cp) + " = " + n(s.total_gpus())
            + " must equal the cluster's " + n(in.total_gpus) + " GPUs";
    case Rule::tp_heads:
        return "tensor parallel degree " + n(s.tp) + " must divide the " + n(m.heads) + " attention heads of " + m.name;
    case Rule::tp_kv_heads:
        return "tensor parallel degree " + n(s.tp) + " must divide the " + n(m.kv_heads) + " KV heads of " + m.name
            + " (Megatron splits query groups across TP ranks)";
    case Rule::tp_ffn:
        return "tensor parallel degree " + n(s.tp) + " must divide the FFN hidden size " + n(m.ffn_hidden);
    case Rule::expert_tp_ffn:
        return "expert tensor parallel degree " + n(s.effective_expert_tp()) + " must divide the expert FFN size "
            + n(m.moe ? m.moe->expert_ffn_hidden : 0);
    case Rule::cp_seq:
        return "context parallel degree " + n(s.cp) + " needs seq_len " + n(in.training.seq_len)
            + " divisible by 2*cp = " + n(2LL * s.cp) + " (causal load balancing splits it into 2*cp chunks)";
    case Rule::cp_heads_all_to_all:
        return "all-to-all (Ulysses) context parallelism of " + n(s.cp) + " must divide the " + n(m.heads / s.tp)
            + " attention heads per TP rank";
    case Rule::too_few_layers:
        return "pp*vpp = " + n(s.pp) + "*" + n(s.vpp) + " = " + n(static_cast<long long>(s.pp) * s.vpp)
            + " pipeline chunks, but " + m.name + " has only " + n(m.layers) + " layers";
    case Rule::stage_overrides:
        if (s.pp < 2)
            return "first_stage_layers/last_stage_layers need pp >= 2";
        if (static_cast<long long>(s.pp) * s.vpp > m.layers)
            return "pp*vpp = " + n(static_cast<long long>(s.pp) * s.vpp) + " pipeline chunks, but " + m.name
                + " has only " + n(m.layers) + " layers";
        if (s.pp == 2 && s.first_stage_layers > 0 && s.last_stage_layers > 0
            && static_cast<long long>(s.first_stage_layers) + s.last_stage_layers < m.layers)
            return "first_stage_layers (" + n(s.first_stage_layers) + ") + last_stage_layers (" + n(s.last_stage_layers)
                + ") must add up to the " + n(m.layers) + " layers of " + m.name
                + " when they are the only two stages (pp 2)";
        return "first_stage_layers (" + n(s.first_stage_layers) + ") + last_stage_layers (" + n(s.last_stage_layers)
            + ") leave too few of the " + n(m.layers) + " layers for the other " + n(s.pp) + " stages x " + n(s.vpp)
            + " chunks";
    case Rule::vpp_needs_pp:
        return "vpp " + n(s.vpp) + " (virtual stages) needs pipeline parallelism (pp > 1)";
    case Rule::vpp_needs_interleaved:
        return "vpp " + n(s.vpp) + " needs schedule \"interleaved\" (schedule is \""
            + std::string(to_string(s.schedule)) + "\")";
    case Rule::interleaved_needs_vpp:
        return "schedule \"interleaved\" needs vpp > 1 (virtual stages per rank)";
    case Rule::batch_divisible:
        return "global_batch " + n(in.training.global_batch) + " must be a positive multiple of micro_batch*dp = "
            + n(s.micro_batch) + "*" + n(s.dp) + " = " + n(static_cast<long long>(s.micro_batch) * s.dp);
    case Rule::interleaved_microbatches:
        return "the interleaved schedule needs the number of micro-batches (" + n(mb) + ") to be a multiple of pp ("
            + n(s.pp) + ") (Megatron-LM)";
    case Rule::zb_microbatches:
        return "zero-bubble ZB-H1 needs at least pp (" + n(s.pp) + ") micro-batches, got " + n(mb);
    case Rule::dualpipe_pp_even:
        return "DualPipe needs an even pp >= 2 (it runs two pipelines in opposite directions), got " + n(s.pp);
    case Rule::dualpipe_microbatches:
        return "DualPipe needs an even number of micro-batches, at least 2*pp (" + n(2LL * s.pp) + "), got " + n(mb);
    case Rule::program_fits:
        if (!s.program)
            return "a custom schedule needs a schedule program (docs/schedule-programs.md)";
        return "the schedule program runs " + n(static_cast<long long>(s.program->stages.size())) + " stages and "
            + n(s.program->microbatches) + " micro-batches; this plan has pp " + n(s.pp) + " and " + n(mb)
            + " micro-batches (write a program for them, or pick a built-in schedule)";
    case Rule::ep_needs_moe:
        return "expert parallelism (ep " + n(s.ep) + ") needs a mixture-of-experts model; " + m.name + " is dense";
    case Rule::ep_experts:
        return "expert parallel degree " + n(s.ep) + " must divide the " + n(m.moe ? m.moe->experts : 0) + " experts";
    case Rule::ep_ranks:
        return "expert parallel degree " + n(s.ep) + " must divide dp*cp = " + n(static_cast<long long>(s.dp) * s.cp)
            + " (EP reuses the data- and context-parallel ranks, as in Megatron-LM; set strategy.expert_tp, e.g. 1, to "
              "fold "
              "the experts over the tensor-parallel ranks too)";
    case Rule::expert_tp_ranks:
        return "expert_tp*ep = " + n(static_cast<long long>(s.effective_expert_tp()) * s.ep)
            + " must divide tp*dp*cp = " + n(static_cast<long long>(s.tp) * s.dp * s.cp);
    case Rule::precision_unsupported:
        if (is_full_precision(in.training.precision))
            return in.gpu.name + " gives no " + std::string(to_string(in.training.precision))
                + " peak (cluster.gpu.peak_TFLOPs." + std::string(to_string(in.training.precision)) + ")";
        return in.gpu.name + " has no " + std::string(to_string(in.training.precision)) + " tensor-core path";
    case Rule::offload_needs_zero:
        return "optimizer offload (ZeRO-Offload) needs a ZeRO stage >= 1";
    case Rule::offload_params_needs_zero3:
        return "parameter offload (ZeRO-Infinity) needs ZeRO 3: the parameters are fetched layer by layer from "
               "host memory and gathered over the data-parallel group (got zero "
            + n(s.zero) + ")";
    case Rule::fp32_reduce_without_zero:
        return "DeepSpeed reduces gradients in fp32 (fp32_allreduce) only without ZeRO; strategy.zero is " + n(s.zero);
    case Rule::recompute_modules_megatron:
        return "recomputation by submodule is Megatron's (recompute_modules); "
            + std::string(to_string(in.training.framework)) + " picks what it recomputes itself";
    case Rule::bf16_gradients_megatron:
        if (in.training.framework != Framework::megatron)
            return "16-bit gradient buffers are Megatron's switch (--grad-reduce-in-bf16); training.framework is "
                + std::string(to_string(in.training.framework));
        if (in.training.grad_reduce_in_fp32)
            return "grad_reduce_in_bf16 contradicts grad_reduce_in_fp32; set one of them";
        return "16-bit gradient buffers need 16-bit parameters; training.precision is "
            + std::string(to_string(in.training.precision));
    case Rule::gradient_release_accumulation:
        return "gradient release applies the optimizer inside the backward, so it needs exactly one micro-batch per "
               "step and no pipeline (got "
            + n(mb) + " micro-batches, pp " + n(s.pp) + ")";
    case Rule::ep_overlap_needs_moe:
        return "EP communication overlap hides one micro-batch's expert all-to-all under another's compute: it needs a "
               "mixture-of-experts model with ep > 1 and at least 2 micro-batches per step (got "
            + std::string(m.is_moe() ? "MoE" : "a dense model") + ", ep " + n(s.ep) + ", " + n(mb) + " micro-batches)";
    }
    return "invalid";
}

std::vector<std::string> strategy_warnings(const PlanInputs& in, const Strategy& s)
{
    std::vector<std::string> w;
    const StageLayout layout = layout_of(in.model, s);
    if (layout.uneven() && !layout.has_empty_chunk()) {
        std::string counts;
        for (int st = 0; st < s.pp && st < 64; ++st) {
            if (!counts.empty())
                counts += ",";
            counts += n(layout.stage_layers(st));
        }
        if (s.pp > 64)
            counts += ",...";
        w.push_back("uneven pipeline stages: layers per stage " + counts + "; the slowest stage sets the pace");
    }
    if (s.sequence_parallel && s.tp == 1)
        w.push_back("sequence_parallel has no effect with tp 1");
    const long long mb = microbatch_count(in.training, s);
    if (s.pp > 1 && mb < s.pp)
        w.push_back("only " + n(mb) + " micro-batches for " + n(s.pp)
            + " pipeline stages: most of the step is pipeline bubble");
    // FlashAttention takes fp16/bf16 operands only (flash-attn README): fp32 runs the unfused attention.
    const bool full_precision = is_full_precision(in.training.precision);
    if (full_precision && in.training.flash_attention)
        w.push_back(std::string(to_string(in.training.precision))
            + " training has no flash attention (FlashAttention takes fp16/bf16): attention runs unfused");
    if (s.recompute == Recompute::selective && (!in.training.flash_attention || full_precision))
        w.push_back("selective recompute without flash attention recomputes the attention core explicitly");
    return w;
}

} // namespace parallax
