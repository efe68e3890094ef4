#include "spec/software_stack.hpp"

namespace parallax {

namespace {

// Eager PyTorch runs RMSNorm as ~5 kernels in fp32 (cast, pow, mean, rsqrt-mul, weight-mul),
// SwiGLU as silu + mul and RoPE as several complex-multiply kernels: counting the reads and writes
// of torchtitan's eager model gives ~4x the bytes of the fused TE kernels (estimate from the
// kernel sequence; to be calibrated by measured runs).
constexpr double kEagerElementwiseTraffic = 4.0;
// torch.compile fuses the pointwise chains into a few Triton kernels, close to hand-fused traffic
// (torchtitan benchmarks: compile alone gives +14-16% on Llama 3.1 8B).
constexpr double kCompiledElementwiseTraffic = 1.3;
// Megatron-core's TEGroupedMLP: Transformer Engine's GroupedLinear loops over the local experts on the
// host, one cuBLASLt GEMM each (plus, in fp8, its cast/transpose kernels), ~20 us of PyTorch + TE +
// cuBLASLt host work per kernel issued (NVIDIA, "Scalable Training of MoE Models with Megatron Core",
// arXiv 2603.07685, "host-boundedness" of small expert GEMMs; the Megatron-Bridge perf tables imply
// 0.25-0.4 ms per local expert per layer and micro-batch at EP 8 with 16-32 local experts).
constexpr double kTeExpertGemmHostSeconds = 20e-6;
// Megatron-DeepSpeed's dense layer (Sailor's OPTParallelTransformerLayer, megatron/model/opt_model.py, and
// megatron/core/tensor_parallel/layers.py), counted op by op. Forward: two MixedFusedLayerNorm (each
// inspect.getfullargspec, the autograd Function, the kernel: 3), QKV ColumnParallelLinear (copy-to-TP
// Function, linear Function, matmul, bias add: 4), split, empty, baddbmm, masked_fill_, softmax, bmm,
// contiguous (7), dense and fc2 RowParallelLinear (linear Function, matmul, reduce-from-TP Function,
// all-reduce: 4 each), fc1 (3), relu, two residual adds: 31. Backward: the four linears' Python backward
// (entry, data- and weight-gradient GEMMs: 3 each, QKV's bias sum 1), the TP regions' backward (2
// identities, 2 entries plus all-reduces), the norms' (entry and 3 kernels each), relu, the contiguous'
// copy, 4 batched GEMMs, softmax, the masked_fill_'s CopySlices (4), the split's cat, 2 residual-gradient
// adds and the gradient accumulation of the 9 parameters that get one: 50.
constexpr double kMegatronDeepSpeedLayerHostOpsFwd = 31;
constexpr double kMegatronDeepSpeedLayerHostOpsBwd = 50;
// Host time per such op: Sailor's per-layer profile of this stack (CUDA events around each layer's
// forward and backward, eth-easl/sailor@cf2c8e3 sailor/Planner/simulations/profiles_tmp.json, OPT-350 at
// TP 4 on a GH200 with its Grace host) has one layer's forward flat at 1.50-1.70 ms from micro-batch 1 to
// 4 and its backward at 1.72-1.85 ms at micro-batch 1-2, while the GPU work grows fourfold: the host's
// floor, 3.22 ms for the 81 ops counted above, ~0.2 ms of it the profiler's own hooks (event records and
// memory queries around each pass): ~37 us per op, against the ~20 us NVIDIA measures to issue one
// Transformer Engine GEMM (kTeExpertGemmHostSeconds): these ops add Python module calls and autograd
// Functions. The same profile on A100 nodes (x86 hosts) gives 37-54 us.
constexpr double kMegatronDeepSpeedHostOpSeconds = 37e-6;
// torchtitan's loss is eager F.cross_entropy on pred.float() (outside the compiled blocks): cast r2+w4,
// log_softmax (max and sum passes, write) r8+w4, nll gather ~0 = 18, plus the nll and the reduction
// ~4 -> 22; backward: scatter the nll gradient w4, log_softmax backward r8+w4 plus its sum pass r4,
// cast back r4+w2 = 26 (torchtitan/train.py loss_fn; aten log_softmax kernels).
constexpr double kEagerLossFwdBytesPerLogit = 22;
constexpr double kEagerLossPeakBytesPerLogit = 12;
constexpr double kEagerLossBwdBytesPerLogit = 26;
// PyTorch's ring attention merges in eager fp32 (_SDPAMerger with convert_to_f32): per step, cast the
// block output r2+w4, out - block_out r8+w4, times sigmoid(lse diff) r4+w4, subtract r8+w4, the
// load-balanced half-updates' chunk + cat ~4 = 46 B per query element, plus the torch.cat of K and V
// for the rotation r2+w2 per K/V element (counted on the query side with K/V at the query width);
// backward: grad_query += r4+r2+w4 and its half-updates ~2 = 12 per query element; per K/V element the
// fp32 gradient accumulation r4+r2+w4, half-update chunk + cat ~8, and the cat before the send r4+w4
// = 26, plus the K/V cat r2+w2 = 30 (torch/distributed/tensor/experimental/_attention.py).
constexpr double kPyTorchCpMergeFwdBytesPerQuery = 46 + 4;
constexpr double kPyTorchCpMergeBwdBytesPerQuery = 12;
constexpr double kPyTorchCpMergeBwdBytesPerKv = 30;
// The same ring attention traced into a compiled block (DTensor's SDPA handler runs while AOTAutograd
// traces): Inductor fuses each step's merge into one kernel, read the fp32 running output r4 and the
// step's bf16 output r2, write fp32 w4 = 10 B per query element (the half-updates' chunk + cat fused into
// that write); the forward's K/V cat feeds no collective after the one all-gather and is dropped as dead
// code; backward grad_query += r4+r2+w4 = 10, and per K/V element the received fp32 gradient r4, the
// step's bf16 gradient r2 and the concatenated send buffer w4 = 10 (_templated_ring_attention_backward).
constexpr double kCompiledCpMergeBytesPerElement = 10;

} // namespace

std::string_view to_string(Framework f)
{
    switch (f) {
    case Framework::megatron:
        return "megatron";
    case Framework::torchtitan:
        return "torchtitan";
    case Framework::torchtitan_compile:
        return "torchtitan-compile";
    case Framework::megatron_deepspeed:
        return "megatron-deepspeed";
    }
    return "megatron";
}

bool framework_from_string(std::string_view s, Framework& out)
{
    for (Framework f :
        { Framework::megatron, Framework::torchtitan, Framework::torchtitan_compile, Framework::megatron_deepspeed })
        if (to_string(f) == s) {
            out = f;
            return true;
        }
    return false;
}

namespace {

// What torchtitan does the same with or without torch.compile (compile changes only the elementwise traffic).
void set_torchtitan_traits(SoftwareTraits& t)
{
    t.attention = AttentionKernel::flash2;
    // torchtitan's Attention repeats K/V to the query heads before SDPA (repeat_kv), so CP passes
    // them at that width; PyTorch's context_parallel all-gathers them (Dec 2024 default).
    t.cp_kv_all_gather = true;
    t.cp_kv_at_query_heads = true;
    t.cp_merge_fwd_bytes_per_query = kPyTorchCpMergeFwdBytesPerQuery;
    t.cp_merge_bwd_bytes_per_query = kPyTorchCpMergeBwdBytesPerQuery;
    t.cp_merge_bwd_bytes_per_kv = kPyTorchCpMergeBwdBytesPerKv;
    t.loss_fwd_bytes_per_logit = kEagerLossFwdBytesPerLogit;
    t.loss_peak_bytes_per_logit = kEagerLossPeakBytesPerLogit;
    t.loss_bwd_bytes_per_logit = kEagerLossBwdBytesPerLogit;
    t.tp_overlap_backward = false;
    t.tp_relayout_copies = true;
    t.selective = SelectivePolicy::every_other_matmul;
    t.tp_backward_overlap = false;
}

} // namespace

SoftwareTraits software_traits(Framework f)
{
    SoftwareTraits t;
    switch (f) {
    case Framework::megatron:
        t.expert_gemm_host_s = kTeExpertGemmHostSeconds;
        t.unfused_yarn_rope = true;
        t.eager_expert_bias = true;
        break;
    case Framework::torchtitan:
        set_torchtitan_traits(t);
        t.elementwise_traffic_factor = kEagerElementwiseTraffic;
        break;
    case Framework::torchtitan_compile:
        set_torchtitan_traits(t);
        t.elementwise_traffic_factor = kCompiledElementwiseTraffic;
        // torchtitan compiles each transformer block whole (fullgraph), the ring attention with it.
        t.cp_comm_waited_at_issue = true;
        t.cp_merge_fwd_bytes_per_query = kCompiledCpMergeBytesPerElement;
        t.cp_merge_bwd_bytes_per_query = kCompiledCpMergeBytesPerElement;
        t.cp_merge_bwd_bytes_per_kv = kCompiledCpMergeBytesPerElement;
        break;
    case Framework::megatron_deepspeed:
        // DeepSpeed PipelineEngine: SendActivation / RecvActivation / SendGrad / RecvGrad are separate
        // blocking instructions of its schedule (deepspeed/runtime/pipe/schedule.py); the activations
        // and gradients travel partitioned across the model-parallel group and are all-gathered on
        // arrival (is_pipe_partitioned = is_model_parallel, PartitionedTensor; pipe/engine.py).
        t.p2p_blocking_transfers_per_microbatch = 4;
        t.expert_gemm_host_s = kTeExpertGemmHostSeconds;
        // Megatron-DeepSpeed's unfused eager layers issue one kernel per PyTorch op from Python; at small
        // micro-batches each op's kernel is shorter than the host's ~20 us to issue it.
        t.kernel_host_s = kTeExpertGemmHostSeconds;
        t.layer_host_ops_fwd = kMegatronDeepSpeedLayerHostOpsFwd;
        t.layer_host_ops_bwd = kMegatronDeepSpeedLayerHostOpsBwd;
        t.layer_host_op_s = kMegatronDeepSpeedHostOpSeconds;
        t.separate_grad_accumulation = true;
        break;
    }
    return t;
}

} // namespace parallax
