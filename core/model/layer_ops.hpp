#pragma once
// The operations of one transformer layer (and of the embedding / output stages) for one
// micro-batch on one GPU, with their FLOPs, bytes and durations. Both fidelities use this list:
// the analytic model sums it, the IR lowers it into the per-device DAG, so they agree by
// construction. Fixed capacity, no heap.
#include "model/collective_model.hpp"
#include "model/compute_model.hpp"
#include "spec/model_spec.hpp"
#include "spec/software_stack.hpp"
#include "spec/strategy.hpp"
#include "spec/training_spec.hpp"

#include <array>

namespace parallax {

enum class OpKind : unsigned char {
    norm,
    qkv_proj,
    attention,
    out_proj,
    residual,
    mlp_up,
    activation,
    mlp_down,
    router,
    expert_up,
    expert_down,
    fp8_cast,
    embedding,
    logits,
    loss,
    tp_comm,
    cp_comm,
    ep_dispatch,
    ep_combine,
    expert_host, // the GPU waits for the host to issue the per-expert kernels (dropless MoE, eager)
    tp_relayout, // copy of an activation around a TP collective (DTensor on the sequence dim)
    cp_merge, // ring attention: per-step correction of the partial outputs (and gradients) in fp32
    rope, // rotary position embeddings applied to Q and K op by op (unfused YaRN RoPE)
    expert_bias, // the experts' output bias added op by op outside the grouped GEMM
    host_wait, // the GPU waits for the host to issue an eager layer's ops (Python-bound layers)
};
const char* to_string(OpKind k);

enum class OpPhase : unsigned char { forward, backward_input, backward_weight, recompute };
// The process group a communication op runs on.
enum class CommGroup : unsigned char { none, tp, cp, ep, expert_tp, pp, dp };
enum class OpStream : unsigned char { compute, tp, cp, ep, pp, dp };
inline constexpr int kOpStreamCount = 6;
// Stream indices into per-stream arrays (exposed or busy seconds by stream).
inline constexpr int kComputeStream = static_cast<int>(OpStream::compute);
inline constexpr int kTpStream = static_cast<int>(OpStream::tp);
inline constexpr int kCpStream = static_cast<int>(OpStream::cp);
inline constexpr int kEpStream = static_cast<int>(OpStream::ep);
inline constexpr int kPpStream = static_cast<int>(OpStream::pp);
inline constexpr int kDpStream = static_cast<int>(OpStream::dp);

struct LayerOp {
    OpKind kind = OpKind::norm;
    OpPhase phase = OpPhase::forward;
    OpStream stream = OpStream::compute;
    Collective collective = Collective::all_reduce;
    CommGroup group = CommGroup::none;
    double time_s = 0;
    double flops = 0; // executed FLOPs (compute ops)
    double bytes = 0; // HBM traffic (compute) or message size (communication)
    // Communication only: index of the compute op this transfer runs concurrently with; -1 = the
    // compute stream waits for it (on the critical path).
    short overlaps = -1;
    // Fraction of that op's time which can hide the transfer (a GEMM decomposed with its collective
    // leaves one piece without anything to overlap).
    float overlap_fraction = 1.0f;
    // GEMMs: C[m x n] = A[m x k] B[k x n], `batch` times (grouped expert GEMMs).
    bool column_parallel_entry = false; // first GEMM of a TP block (its input gradient is all-reduced)
    float m = 0, n = 0, k = 0, batch = 0;
};

struct LayerOps {
    // The heaviest layer (DeepSeek-V3's MoE layer with MLA, shared expert, fp8, SP and full
    // recompute) has 129 ops; tst_formulas checks it stays below the capacity.
    static constexpr int kCapacity = 192;
    std::array<LayerOp, kCapacity> op {};
    int count = 0;
    bool overflowed = false; // an op was dropped: the capacity is too small (a bug, tested)
    int add(const LayerOp& o) noexcept
    {
        if (count >= kCapacity) {
            overflowed = true;
            return count - 1;
        }
        op[count] = o;
        return count++;
    }
};

// Per micro-batch sums over a LayerOps list.
struct LayerTotals {
    double forward_s = 0; // compute stream, forward ops
    double backward_input_s = 0; // B
    double backward_weight_s = 0; // W
    double recompute_s = 0;
    double comm_busy_s[kOpStreamCount] = {}; // by stream
    double comm_exposed_fwd_s[kOpStreamCount] = {}; // blocking time added to the forward
    double comm_exposed_bwd_s[kOpStreamCount] = {}; // ... and to the backward (incl. recompute)
    double flops = 0; // executed, incl. recompute
    double recompute_flops = 0;
    double exposed_fwd() const;
    double exposed_bwd() const;
    // Time on the critical path of one forward / backward of this layer.
    double fwd_time() const { return forward_s + exposed_fwd(); }
    double bwd_time() const { return backward_input_s + backward_weight_s + recompute_s + exposed_bwd(); }
    void add(const LayerTotals& o, double times);
};

struct LayerContext {
    const ModelSpec* model = nullptr;
    const TrainingSpec* training = nullptr;
    const Strategy* strategy = nullptr;
    ComputeDevice device;
    NetworkModel network;
    GroupPlacement tp_group;
    GroupPlacement cp_group;
    GroupPlacement ep_group;
    GroupPlacement expert_tp_group;
    SoftwareTraits traits;
    // The busiest EP rank's token load over the mean (moe_load.hpp): it sets the pace of MoE layers.
    double moe_straggler = 1.0;
};

void build_layer_ops(const LayerContext& ctx, bool moe_layer, LayerOps& out) noexcept;
// Input embedding (first stage) and final norm + output projection + loss (last stage).
void build_embedding_ops(const LayerContext& ctx, LayerOps& out) noexcept;
void build_output_ops(const LayerContext& ctx, LayerOps& out) noexcept;
LayerTotals summarize(const LayerOps& ops) noexcept;

// What one layer keeps for its backward, per micro-batch (Korthikanti et al. 2022 Table 2 generalised to
// GQA, SwiGLU, flash attention, CP and MoE): the tensors' bytes on the GPU, and the host memory they
// take when offloaded, each in its own pinned block, which PyTorch's caching host allocator rounds up
// to a power of two.
struct LayerSavedBytes {
    double device = 0;
    double pinned_host = 0;
};
LayerSavedBytes layer_saved_bytes(const LayerContext& ctx, bool moe_layer) noexcept;
// layer_saved_bytes(...).device
double layer_activation_bytes(const LayerContext& ctx, bool moe_layer) noexcept;

} // namespace parallax
