#include "spec/framework_support.hpp"

#include "spec/layer_ranges.hpp"

namespace parallax {

namespace {

bool is_torchtitan(Framework f)
{
    return f == Framework::torchtitan || f == Framework::torchtitan_compile;
}

std::string n(long long v)
{
    return std::to_string(v);
}

std::string name_of(Framework f)
{
    switch (f) {
    case Framework::megatron:
        return "Megatron-LM";
    case Framework::torchtitan:
        return "torchtitan";
    case Framework::torchtitan_compile:
        return "torchtitan (torch.compile)";
    case Framework::megatron_deepspeed:
        return "Megatron-DeepSpeed";
    }
    return "Megatron-LM";
}

// The plan-level checks, each a property of one strategy; holds() is allocation-free (the search calls
// it per candidate), message() says what failed and why.
enum class PlanCheck : unsigned char {
    schedule,
    zb_sequence_parallel,
    cp_kind,
    cp_sequence_parallel,
    zero,
    expert_tp,
    expert_parallel,
    sequence_parallel,
    tp_comm_overlap,
    ep_overlap,
    ep_tile_overlap,
    optimizer,
    optimizer_zero,
    offload,
    activation_offload,
    param_offload,
    gradient_release,
    rank_order,
    stage_overrides,
};
constexpr PlanCheck kPlanChecks[] = { PlanCheck::schedule, PlanCheck::zb_sequence_parallel, PlanCheck::cp_kind,
    PlanCheck::cp_sequence_parallel, PlanCheck::zero, PlanCheck::expert_tp, PlanCheck::expert_parallel,
    PlanCheck::sequence_parallel, PlanCheck::tp_comm_overlap, PlanCheck::ep_overlap, PlanCheck::ep_tile_overlap,
    PlanCheck::optimizer, PlanCheck::optimizer_zero, PlanCheck::offload, PlanCheck::activation_offload,
    PlanCheck::param_offload, PlanCheck::gradient_release, PlanCheck::rank_order, PlanCheck::stage_overrides };

bool dp_only(const Strategy& s)
{
    return s.tp == 1 && s.pp == 1 && s.cp == 1 && s.ep == 1;
}

bool holds(PlanCheck c, FrameworkRelease fr, const Strategy& s, const ModelSpec& m) noexcept
{
    const Framework f = fr.framework;
    switch (c) {
    case PlanCheck::schedule:
        return s.pp <= 1 || framework_supports(fr, s.schedule);
    case PlanCheck::zb_sequence_parallel:
        // Megatron-DeepSpeed megatron/arguments.py validate_args: the ZB-H1 pipeline asserts
        // sequence_parallel == False ("Sequence Parallel not tested").
        return !(f == Framework::megatron_deepspeed && s.pp > 1 && s.schedule == Schedule::zb_h1 && s.sequence_parallel
            && s.tp > 1);
    case PlanCheck::cp_kind:
        return s.cp <= 1 || framework_supports(fr, s.cp_kind);
    case PlanCheck::cp_sequence_parallel:
        // Megatron-DeepSpeed --ds-sequence-parallel-size: "Cannot be combined with --sequence-parallel".
        return !(f == Framework::megatron_deepspeed && s.cp > 1 && s.sequence_parallel && s.tp > 1);
    case PlanCheck::zero:
        return static_cast<long long>(s.dp) * s.cp <= 1 || framework_supports_zero(fr, s.zero, s.pp, dp_only(s));
    case PlanCheck::expert_tp:
        return !m.is_moe() || s.ep <= 1 || framework_supports_expert_tp(fr, s.expert_tp, s.tp);
    case PlanCheck::expert_parallel:
        if (!m.is_moe() || s.ep <= 1)
            return true;
        // DeepSpeed builds expert-parallel groups inside the data-parallel group
        // (deepspeed/utils/groups.py _create_expert_and_data_parallel): ep divides dp.
        if (f == Framework::megatron_deepspeed)
            return s.dp % s.ep == 0;
        // torchtitan borrows the expert-parallel ranks from FSDP's data_parallel_shard (and cp, tp):
        // torchtitan/distributed/parallel_dims.py v0.2.2; plain DDP replicas cannot host experts.
        if (is_torchtitan(f))
            return s.dp <= 1 || s.zero >= 2;
        return true;
    case PlanCheck::sequence_parallel:
        return framework_supports_sequence_parallel(fr, s.sequence_parallel, s.tp);
    case PlanCheck::tp_comm_overlap:
        if (!s.tp_comm_overlap || s.tp <= 1)
            return true;
        // Megatron-LM arguments.py: "Tensor parallel communication/GEMM overlap can happen only when
        // sequence parallelism is enabled".
        if (f == Framework::megatron && !s.sequence_parallel)
            return false;
        return framework_supports_tp_comm_overlap(fr);
    case PlanCheck::ep_overlap:
        return !s.ep_overlap || framework_supports_ep_overlap(fr);
    case PlanCheck::ep_tile_overlap:
        return !s.ep_tile_overlap || framework_supports_ep_tile_overlap(fr);
    case PlanCheck::optimizer:
        return framework_supports(fr, s.optimizer);
    case PlanCheck::optimizer_zero:
        // Megatron-LM arguments.py: optimizers other than adam/sgd ("emerging optimizers") assert
        // not use_megatron_fsdp, which ZeRO 2/3 need.
        return !(f == Framework::megatron && s.optimizer != Optimizer::adam && s.optimizer != Optimizer::sgd
            && s.zero >= 2 && static_cast<long long>(s.dp) * s.cp > 1);
    case PlanCheck::offload:
        // Parameter offload takes the optimizer states with it (torchtitan's enable_cpu_offload).
        return !s.offload_optimizer || s.offload_params || framework_supports_optimizer_offload(fr);
    case PlanCheck::activation_offload:
        return !offloads_any_activations(s) || framework_supports_activation_offload(fr, s.pp, s.recompute);
    case PlanCheck::param_offload:
        return !s.offload_params || framework_supports_param_offload(fr);
    case PlanCheck::gradient_release:
        // torchtitan components/optimizer.py: optimizers in backward raise NotImplementedError with pipeline
        // or expert parallelism.
        return !s.gradient_release || (framework_supports_gradient_release(fr) && s.pp == 1 && s.ep == 1);
    case PlanCheck::rank_order:
        return framework_supports(fr, s.rank_order);
    case PlanCheck::stage_overrides:
        return (s.first_stage_layers <= 0 && s.last_stage_layers <= 0) || framework_supports_stage_overrides(fr);
    }
    return true;
}

std::string schedule_reason(Framework f)
{
    switch (f) {
    case Framework::megatron:
        return "Megatron-LM's pipeline schedules are 1F1B and interleaved 1F1B "
               "(megatron/core/pipeline_parallel/schedules.py); it has no GPipe, zero-bubble, DualPipe or custom "
               "(program) schedule";
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        return "torchtitan runs GPipe, 1F1B, Interleaved1F1B and schedule programs from a CSV "
               "(pipeline_parallel_schedule_csv); its zero-bubble schedules (InterleavedZeroBubble, "
               "ZBVZeroBubble) and DualPipeV need two or more stages per rank, unlike the one-stage ZB-H1 and the "
               "two-pipeline DualPipe modelled here (torchtitan/distributed/pipeline_parallel.py)";
    case Framework::megatron_deepspeed:
        return "DeepSpeed's pipeline engine runs 1F1B (TrainSchedule) and, with --enable-zbh1-pipeline, ZB-H1; it "
               "has no interleaved, GPipe or DualPipe schedule";
    }
    return {};
}

Unsupported message(PlanCheck c, FrameworkRelease fr, const Strategy& s, const ModelSpec& m)
{
    const Framework f = fr.framework;
    const std::string fw = name_of(f);
    switch (c) {
    case PlanCheck::schedule:
        return { "strategy.schedule", "the " + std::string(to_string(s.schedule)) + " schedule", schedule_reason(f) };
    case PlanCheck::zb_sequence_parallel:
        return { "strategy.sequence_parallel", "sequence parallelism with the zb-h1 schedule",
            "Megatron-DeepSpeed's ZB-H1 pipeline refuses --sequence-parallel (megatron/arguments.py)" };
    case PlanCheck::cp_kind:
        return { "strategy.cp_kind", std::string(to_string(s.cp_kind)) + " context parallelism",
            f == Framework::megatron_deepspeed
                ? "Megatron-DeepSpeed's context parallelism is DeepSpeed-Ulysses (--ds-sequence-parallel-size, the "
                  "all-to-all kind); it has no ring attention"
                : "torchtitan's context parallelism is ring attention (context_parallel_rotate_method allgather or "
                  "alltoall pass K/V around the ring); it has no Ulysses head all-to-all" };
    case PlanCheck::cp_sequence_parallel:
        return { "strategy.sequence_parallel", "Megatron sequence parallelism with context parallelism",
            "Megatron-DeepSpeed's --ds-sequence-parallel-size cannot be combined with --sequence-parallel" };
    case PlanCheck::zero:
        if (is_torchtitan(f))
            return { "strategy.zero", "ZeRO " + n(s.zero),
                s.zero == 1 ? "torchtitan's data parallelism is DDP or FSDP2 (ZeRO 2 with fsdp_reshard_after_forward "
                              "\"never\", ZeRO 3); it has no optimizer-only sharding"
                            : "torchtitan's DDP (ZeRO 0) runs only when data parallelism is the only parallelism "
                              "(\"DDP has not supported > 1D parallelism\"); use FSDP (ZeRO 2 or 3)" };
        return { "strategy.zero", "ZeRO " + n(s.zero) + " with pipeline parallelism",
            "DeepSpeed's pipeline engine allows ZeRO stages 0 and 1 only (ZeRO 2/3 shard what the pipeline "
            "schedule keeps)" };
    case PlanCheck::expert_tp:
        return { "strategy.expert_tp",
            "expert tensor parallelism " + n(s.effective_expert_tp()) + " (tp " + n(s.tp) + ")",
            fw
                + " runs the experts either with the dense layers' tensor parallelism or without any "
                  "(torchtitan: expert_tensor_parallel_degree = tp or 1; Megatron-DeepSpeed: "
                  "--enable-expert-tensor-parallelism or not)" };
    case PlanCheck::expert_parallel:
        return { "strategy.ep", "expert parallelism " + n(s.ep),
            f == Framework::megatron_deepspeed
                ? "DeepSpeed forms expert-parallel groups inside the data-parallel group: ep must divide dp (" + n(s.dp)
                    + ")"
                : "torchtitan takes the expert-parallel ranks from FSDP's data_parallel_shard degree: with dp > 1 "
                  "the plan needs ZeRO 2 or 3" };
    case PlanCheck::sequence_parallel:
        return { "strategy.sequence_parallel", "tensor parallelism without sequence parallelism",
            "torchtitan's tensor parallelism always shards the sequence in the norms (SequenceParallel); it "
            "cannot turn it off" };
    case PlanCheck::tp_comm_overlap:
        if (f == Framework::megatron)
            return { "strategy.tp_comm_overlap", "TP communication overlap without sequence parallelism",
                "Megatron-LM's --tp-comm-overlap needs --sequence-parallel" };
        return { "strategy.tp_comm_overlap", "TP communication overlap",
            f == Framework::torchtitan
                ? "torchtitan's async tensor parallelism needs torch.compile (\"Async TP requires 'model' in "
                  "--compile.components and --compile.enable\"): use training.framework torchtitan-compile"
                : "Megatron-DeepSpeed has no TP communication overlap" };
    case PlanCheck::ep_overlap:
        return { "strategy.ep_overlap", "batch-level expert all-to-all overlap",
            f == Framework::megatron_deepspeed
                ? "Megatron-DeepSpeed has no expert all-to-all overlap"
                : "torchtitan overlaps the expert all-to-all only inside its DualPipeV schedule "
                  "(pipeline_parallel_expert_parallel_overlap)" };
    case PlanCheck::ep_tile_overlap:
        return { "strategy.ep_tile_overlap", "tile-level overlap of the expert all-to-all with the grouped GEMMs",
            fw
                + " has no fused dispatch/combine GEMM kernels (Comet's Flux kernels replace Megatron-LM's MoE "
                  "layer: github.com/bytedance/flux, MLSys 2025 artifact)" };
    case PlanCheck::optimizer:
        return { "strategy.optimizer", "the " + std::string(to_string(s.optimizer)) + " optimizer",
            f == Framework::megatron ? "Megatron-LM's --optimizer takes adam, sgd, lion, muon and soap; 8-bit "
                                       "optimizer states are not among them"
                : is_torchtitan(f)   ? "torchtitan builds Adam and AdamW only (torchtitan/components/optimizer.py)"
                                     : "Megatron-DeepSpeed's --optimizer takes adam and sgd" };
    case PlanCheck::optimizer_zero:
        return { "strategy.zero",
            "ZeRO " + n(s.zero) + " with the " + std::string(to_string(s.optimizer)) + " optimizer",
            "Megatron-LM runs optimizers other than adam and sgd without Megatron-FSDP (ZeRO 2/3)" };
    case PlanCheck::offload:
        return { "strategy.offload_optimizer", "optimizer offload to the CPU",
            "torchtitan offloads parameters, gradients and optimizer states together (training.enable_cpu_offload), "
            "not the optimizer alone" };
    case PlanCheck::activation_offload:
        return { "strategy.offload_activations", "activation offload to host memory",
            f == Framework::megatron
                ? "Megatron-LM's --cpu-offloading runs without pipeline parallelism and without activation "
                  "recomputation (transformer_config.py: \"no support for Pipeline parallelism with CPU offloading\", "
                  "\"CPU offloading does not work when activation recomputation is enabled\")"
                : f == Framework::megatron_deepspeed
                ? "DeepSpeed offloads only checkpointed activations (activation_checkpointing.cpu_checkpointing): it "
                  "needs full recomputation"
                : "torchtitan has no activation offload to host memory" };
    case PlanCheck::param_offload:
        return { "strategy.offload_params", "parameter offload to host memory",
            "Megatron-LM has no parameter offload (ZeRO-Infinity's zero_optimization.offload_param in DeepSpeed, "
            "training.enable_cpu_offload in torchtitan)" };
    case PlanCheck::gradient_release:
        return { "strategy.gradient_release", "gradient release (optimizer step inside the backward)",
            is_torchtitan(f) ? "torchtitan's optimizer.early_step_in_backward does not run with pipeline or expert "
                               "parallelism (components/optimizer.py)"
                             : fw
                    + " has no optimizer step in the backward (torchtitan has: "
                      "optimizer.early_step_in_backward)" };
    case PlanCheck::rank_order:
        return { "strategy.rank_order", "rank order " + to_string(s.rank_order),
            f == Framework::megatron
                ? "Megatron-LM lays ranks out as tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with --use-tp-pp-dp-mapping"
                : fw + " lays ranks out as tp-cp-ep-dp-pp (innermost first) only" };
    case PlanCheck::stage_overrides:
        return { "strategy.first_stage_layers", "first/last pipeline stage layer counts",
            "DeepSpeed's PipelineModule balances the layers itself (partition_method); it takes no per-stage counts" };
    }
    (void)m;
    return {};
}

} // namespace

bool framework_supports(FrameworkRelease fr, Schedule s) noexcept
{
    switch (fr.framework) {
    case Framework::megatron:
        // megatron/core/pipeline_parallel/schedules.py: forward_backward_pipelining_without_interleaving
        // (1F1B) and _with_interleaving (virtual stages); no GPipe, ZB or DualPipe (Megatron-LM main, 2026-08).
        return s == Schedule::one_f_one_b || s == Schedule::interleaved;
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        // torch.distributed.pipelining ScheduleGPipe / Schedule1F1B / ScheduleInterleaved1F1B through
        // parallelism.pipeline_parallel_schedule; ZB and DualPipeV variants need >= 2 stages per rank
        // (torchtitan/distributed/pipeline_parallel.py v0.2.2).
        // A custom program is what its _PipelineScheduleRuntime runs from a CSV (pipeline_parallel_schedule_csv).
        return s == Schedule::gpipe || s == Schedule::one_f_one_b || s == Schedule::interleaved
            || s == Schedule::custom;
    case Framework::megatron_deepspeed:
        // DeepSpeed PipelineEngine TrainSchedule (1F1B); --enable-zbh1-pipeline swaps in ZeroBubbleH1Pipeline
        // (Megatron-DeepSpeed megatron/core/pipeline_parallel/deepspeed_zbh1_schedule.py).
        return s == Schedule::one_f_one_b || s == Schedule::zb_h1;
    }
    return false;
}

bool framework_supports(FrameworkRelease fr, CpKind k) noexcept
{
    switch (fr.framework) {
    case Framework::megatron:
        return true; // --cp-comm-type p2p (ring) or a2a (Ulysses), megatron/training/arguments.py
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        return k == CpKind::ring; // ring attention only (context_parallel_rotate_method), job_config.py v0.2.2
    case Framework::megatron_deepspeed:
        return k == CpKind::all_to_all; // DeepSpeed-Ulysses, --ds-sequence-parallel-size (megatron/arguments.py)
    }
    return false;
}

bool framework_supports(FrameworkRelease fr, Optimizer o) noexcept
{
    switch (fr.framework) {
    case Framework::megatron:
        // --optimizer choices adam, sgd, muon, dist_muon, lion, soap, adaptive_muon (arguments.py, 2026-08).
        return o == Optimizer::adam || o == Optimizer::sgd || o == Optimizer::lion;
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        return o == Optimizer::adam; // optimizer_classes = {Adam, AdamW} (components/optimizer.py v0.2.2)
    case Framework::megatron_deepspeed:
        return o == Optimizer::adam || o == Optimizer::sgd; // --optimizer choices adam, sgd
    }
    return false;
}

bool framework_supports(FrameworkRelease fr, MoeDispatcher d) noexcept
{
    if (d == MoeDispatcher::all_to_all)
        return true;
    switch (fr.framework) {
    case Framework::megatron:
        return true; // --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep (transformer_config.py)
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        return true; // parallelism.expert_parallel_comm_backend = "deepep" (job_config.py v0.2.2)
    case Framework::megatron_deepspeed:
        return false; // DeepSpeed-MoE dispatches with its own all-to-all (deepspeed/moe/sharded_moe.py)
    }
    return false;
}

bool framework_supports(FrameworkRelease fr, CudaGraphs g) noexcept
{
    // Megatron-LM --cuda-graph-impl transformer_engine | full_iteration (transformer_config.py); torchtitan
    // v0.2.2's JobConfig and Megatron-DeepSpeed have no CUDA-graph option.
    return g == CudaGraphs::none || fr.framework == Framework::megatron;
}

bool framework_supports_zero(FrameworkRelease fr, int zero, int pp, bool dp_only) noexcept
{
    switch (fr.framework) {
    case Framework::megatron:
        // 0 DDP, 1 --use-distributed-optimizer, 2/3 --use-megatron-fsdp with --data-parallel-sharding-strategy
        // optim_grads / optim_grads_params (arguments.py).
        return zero >= 0 && zero <= 3;
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        // FSDP2 fully_shard (ZeRO 3; fsdp_reshard_after_forward "never" keeps the gathered parameters: ZeRO 2);
        // DDP only as the only parallelism (llama3/infra/parallelize.py: "DDP has not supported > 1D
        // parallelism"); no optimizer-only sharding.
        return zero == 2 || zero == 3 || (zero == 0 && dp_only);
    case Framework::megatron_deepspeed:
        // DeepSpeed asserts ZeRO < 2 under its pipeline engine (deepspeed/runtime/pipe/engine.py).
        return zero >= 0 && zero <= (pp > 1 ? 1 : 3);
    }
    return false;
}

bool framework_supports_expert_tp(FrameworkRelease fr, int expert_tp, int tp) noexcept
{
    const int etp = expert_tp > 0 ? expert_tp : tp;
    if (fr.framework == Framework::megatron)
        return true; // --expert-tensor-parallel-size (model_parallel_config.py)
    // torchtitan parallel_dims.py: "Currently we only support ETP=TP or ETP=1"; Megatron-DeepSpeed:
    // --enable-expert-tensor-parallelism (experts on the TP group) or none.
    return etp == tp || etp == 1;
}

bool framework_supports_sequence_parallel(FrameworkRelease fr, bool sequence_parallel, int tp) noexcept
{
    // torchtitan's TP plan always applies SequenceParallel to the norms (llama3/infra/parallelize.py).
    if (tp > 1 && !sequence_parallel && is_torchtitan(fr.framework))
        return false;
    return true; // Megatron-LM and Megatron-DeepSpeed: --sequence-parallel optional
}

bool framework_supports_tp_comm_overlap(FrameworkRelease fr) noexcept
{
    // Megatron-LM --tp-comm-overlap (Transformer Engine userbuffers); torchtitan
    // enable_async_tensor_parallel only with compile (distributed/tensor_parallel.py maybe_enable_async_tp).
    return fr.framework == Framework::megatron || fr.framework == Framework::torchtitan_compile;
}

bool framework_supports_ep_overlap(FrameworkRelease fr) noexcept
{
    // Megatron-LM --overlap-moe-expert-parallel-comm (combined_1f1b.py); torchtitan only in DualPipeV.
    return fr.framework == Framework::megatron;
}

bool framework_supports_ep_tile_overlap(FrameworkRelease fr) noexcept
{
    // Comet (Zhang et al., MLSys 2025) ships its MoE layer0/layer1 kernels in Flux and runs them inside
    // Megatron-LM's MoE layer (its artifact's end-to-end runs); torchtitan and DeepSpeed have no such kernels.
    return fr.framework == Framework::megatron;
}

bool framework_supports_optimizer_offload(FrameworkRelease fr) noexcept
{
    // Megatron-LM --optimizer-cpu-offload (with --use-precision-aware-optimizer); DeepSpeed
    // zero_optimization.offload_optimizer; torchtitan offloads everything or nothing.
    return fr.framework == Framework::megatron || fr.framework == Framework::megatron_deepspeed;
}

bool framework_supports_activation_offload(FrameworkRelease fr, int pp, Recompute recompute) noexcept
{
    switch (fr.framework) {
    case Framework::megatron:
        // --cpu-offloading / --cpu-offloading-num-layers: transformer_config.py refuses it with pp > 1 and with
        // activation recomputation.
        return pp <= 1 && recompute == Recompute::none;
    case Framework::megatron_deepspeed:
        // activation_checkpointing.cpu_checkpointing: the checkpointed layer inputs go to host memory.
        return recompute == Recompute::full;
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        return false;
    }
    return false;
}

bool framework_supports_param_offload(FrameworkRelease fr) noexcept
{
    // DeepSpeed zero_optimization.offload_param (ZeRO-Infinity, stage 3); torchtitan training.enable_cpu_offload
    // (FSDP2 CPUOffloadPolicy). Megatron-LM offloads the optimizer only.
    return fr.framework != Framework::megatron;
}

bool framework_supports_gradient_release(FrameworkRelease fr) noexcept
{
    return is_torchtitan(fr.framework); // optimizer.early_step_in_backward (job_config.py v0.2.2)
}

bool framework_supports(FrameworkRelease fr, const RankOrder& o) noexcept
{
    if (o == RankOrder {})
        return true;
    // Megatron-LM --use-tp-pp-dp-mapping: order "tp-cp-ep-pp-dp" (megatron/core/parallel_state.py).
    const RankOrder tp_pp_dp { { ParallelDim::tp, ParallelDim::cp, ParallelDim::ep, ParallelDim::pp,
        ParallelDim::dp } };
    return fr.framework == Framework::megatron && o == tp_pp_dp;
}

bool framework_supports_stage_overrides(FrameworkRelease fr) noexcept
{
    // Megatron-LM --decoder-first/last-pipeline-num-layers (or --pipeline-model-parallel-layout); torchtitan
    // parallelism.module_fqns_per_model_part; DeepSpeed's PipelineModule partitions by itself.
    return fr.framework != Framework::megatron_deepspeed;
}

bool framework_supports(FrameworkRelease fr, Precision p, Fp8Scaling scaling) noexcept
{
    switch (fr.framework) {
    case Framework::megatron:
        // --bf16, --fp16, --fp8-format hybrid --fp8-recipe delayed|tensorwise|mxfp8|blockwise (no rowwise),
        // --fp4-format e2m1 --fp4-recipe nvfp4 (transformer_config.py).
        // No precision flag: fp32 (params_dtype torch.float32); tf32 is that with cuBLAS rounding fp32 GEMM
        // inputs to TF32 (torch.backends.cuda.matmul.allow_tf32, or NGC PyTorch containers'
        // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1).
        return p != Precision::fp8 || scaling != Fp8Scaling::rowwise;
    case Framework::torchtitan:
    case Framework::torchtitan_compile:
        // training.mixed_precision_param bfloat16 | float32 (no fp16); float8 converter recipes tensorwise,
        // rowwise (quantize.linear.float8.recipe_name). Its MX converter is not exported here.
        return p == Precision::bf16
            || (p == Precision::fp8 && (scaling == Fp8Scaling::tensorwise || scaling == Fp8Scaling::rowwise));
    case Framework::megatron_deepspeed:
        // --bf16 / --fp16, or neither (fp32, as Sailor's runs train); its fp8 (--fp8-hybrid) needs Transformer
        // Engine layers, which the DeepSpeed pipeline model (GPTModelPipe) does not build.
        return p == Precision::bf16 || p == Precision::fp16 || p == Precision::fp32 || p == Precision::tf32;
    }
    return false;
}

bool framework_runs(FrameworkRelease f, const Strategy& s, const ModelSpec& m) noexcept
{
    for (PlanCheck c : kPlanChecks)
        if (!holds(c, f, s, m))
            return false;
    return true;
}

std::vector<Unsupported> unsupported_plan_features(FrameworkRelease f, const Strategy& s, const ModelSpec& m)
{
    std::vector<Unsupported> out;
    for (PlanCheck c : kPlanChecks)
        if (!holds(c, f, s, m))
            out.push_back(message(c, f, s, m));
    return out;
}

std::vector<Unsupported> unsupported_settings(FrameworkRelease fr, const TrainingSpec& t, const ModelSpec& m)
{
    const Framework f = fr.framework;
    const std::string fw = name_of(f);
    std::vector<Unsupported> out;
    if (!framework_supports(fr, t.precision, t.fp8_scaling)) {
        if (t.precision == Precision::fp8 && t.fp8_scaling == Fp8Scaling::rowwise && f == Framework::megatron)
            out.push_back({ "training.fp8_scaling", "rowwise fp8 scaling",
                "Megatron-LM's fp8 recipes are delayed, tensorwise, mxfp8 and blockwise (--fp8-recipe); rowwise "
                "scaling is torchao's (torchtitan)" });
        else if (t.precision == Precision::fp8 && is_torchtitan(f))
            out.push_back({ "training.fp8_scaling", std::string(to_string(t.fp8_scaling)) + " fp8 scaling",
                "torchtitan's float8 converter scales tensorwise or rowwise (quantize.linear.float8.recipe_name)" });
        else
            out.push_back({ "training.precision", std::string(to_string(t.precision)) + " matmuls",
                is_torchtitan(f) ? "torchtitan trains in bf16 (mixed_precision_param bfloat16 | float32), fp8 "
                                   "through torchao's float8 converter and mxfp8 through its MX converter; its "
                                   "fp32 attention runs SDPA's memory-efficient kernel, which is not modelled"
                    : f == Framework::megatron
                    ? "Megatron-LM has no tf32 switch: its fp32 matmuls run in full fp32 (PyTorch's default "
                      "torch.backends.cuda.matmul.allow_tf32 = False)"
                    : "Megatron-DeepSpeed trains in fp32, bf16 or fp16: its fp8 needs Transformer Engine "
                      "layers, which its DeepSpeed pipeline model does not build" });
    }
    if (m.is_moe() && !framework_supports(fr, t.moe_dispatcher))
        out.push_back({ "training.moe_dispatcher", "the DeepEP dispatcher",
            "DeepSpeed-MoE dispatches with its own all-to-all (deepspeed/moe/sharded_moe.py)" });
    if (!framework_supports(fr, t.cuda_graphs))
        out.push_back({ "training.cuda_graphs", "CUDA graphs",
            fw + " has no CUDA-graph option (Megatron-LM has: --cuda-graph-impl)" });
    if (f == Framework::megatron_deepspeed) {
        if (m.mla)
            out.push_back({ "model.attention", "multi-head latent attention",
                "Megatron-DeepSpeed's attention is multi-head or grouped-query only" });
        if (m.sliding_window > 0)
            out.push_back({ "model.sliding_window", "sliding-window attention",
                "Megatron-DeepSpeed has no sliding-window attention" });
        if (m.attention_sinks)
            out.push_back({ "model.attention_sinks", "attention sinks", "Megatron-DeepSpeed has no attention sinks" });
        if (m.is_moe() && m.moe->shared_experts > 0)
            out.push_back({ "model.moe.shared_experts", "shared experts",
                "DeepSpeed-MoE's layers have routed experts only (its residual MoE is one dense MLP beside them, "
                "not shared experts)" });
        if (m.is_moe() && m.moe->first_dense_layers > 0)
            out.push_back({ "model.moe.first_dense_layers", "dense first layers",
                "Megatron-DeepSpeed places MoE layers every --expert-interval layers; it cannot keep the first layers "
                "dense" });
        if (m.is_moe() && m.moe->first_dense_layers == 0 && m.moe->moe_layer_freq > 1)
            out.push_back({ "model.moe.moe_layer_freq",
                "an MoE layer every " + n(m.moe->moe_layer_freq) + " layers from the first",
                "Megatron-DeepSpeed's --expert-interval N makes layers N, 2N, ... (1-based) MoE layers, never the "
                "first (megatron/model/transformer.py get_num_experts_per_layer)" });
    }
    if (is_torchtitan(f) && m.ffn_act == FfnActivation::gelu)
        out.push_back({ "model.ffn_act", "a GELU MLP",
            "torchtitan's model families (llama3, llama4, qwen3, deepseek_v3, gpt_oss) all use SwiGLU MLPs" });
    return out;
}

std::vector<Framework> frameworks_running(const Strategy& s, const ModelSpec& m)
{
    std::vector<Framework> out;
    for (Framework f : kAllFrameworks)
        if (framework_runs(f, s, m))
            out.push_back(f);
    return out;
}

std::string frameworks_label(const std::vector<Framework>& fs)
{
    if (fs.empty())
        return "none";
    std::string out;
    for (Framework f : fs)
        out += (out.empty() ? "" : ", ") + std::string(to_string(f));
    return out;
}

} // namespace parallax
