#pragma once
// A parallelisation strategy: plain data, trivially copyable, so the search can enumerate
// millions of them without touching the heap.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax {

struct ScheduleProgram;
struct LayerRanges;

enum class Recompute : unsigned char { none, selective, full };
// The submodules Megatron's selective recomputation re-runs (TransformerConfig.recompute_modules): the core
// attention, the two norms, the MoE experts' activation, a dense layer's MLP, the whole MoE block, the shared
// experts, MLA's up-projections.
enum class RecomputeModule : unsigned char { core_attn, layernorm, moe_act, mlp, moe, shared_experts, mla_up_proj };
inline constexpr int kRecomputeModuleCount = 7;
// A module's bit in Strategy::recompute_modules.
constexpr unsigned char recompute_module_bit(RecomputeModule m)
{
    return static_cast<unsigned char>(1u << static_cast<int>(m));
}
// Megatron's default module list: the core attention only (Korthikanti et al. 2022).
inline constexpr unsigned char kDefaultRecomputeModules = recompute_module_bit(RecomputeModule::core_attn);
// custom: the pass order comes from a schedule program (ir/schedule_program.hpp, Strategy::program).
enum class Schedule : unsigned char { gpipe, one_f_one_b, interleaved, zb_h1, dualpipe, custom };
enum class Optimizer : unsigned char { adam, adam8bit, sgd, lion };
// How context parallelism exchanges attention inputs: ring (send/recv KV chunks) or all-to-all (Ulysses).
enum class CpKind : unsigned char { ring, all_to_all };
enum class ParallelDim : unsigned char { tp, cp, ep, dp, pp };
inline constexpr int kParallelDimCount = 5;

std::string_view to_string(Recompute r);
std::string_view to_string(Schedule s);
std::string_view to_string(Optimizer o);
std::string_view to_string(CpKind k);
std::string_view to_string(ParallelDim d);
bool recompute_from_string(std::string_view s, Recompute& out);
std::string_view to_string(RecomputeModule m);
bool recompute_module_from_string(std::string_view s, RecomputeModule& out);
// The names of the modules a recompute_modules bit set holds, in RecomputeModule order.
std::vector<std::string_view> recompute_module_names(unsigned char modules);
bool schedule_from_string(std::string_view s, Schedule& out);
bool optimizer_from_string(std::string_view s, Optimizer& out);
bool cp_kind_from_string(std::string_view s, CpKind& out);

// Order in which the parallel dimensions are laid onto consecutive ranks, innermost first.
// Megatron's default "tp-cp-ep-dp-pp" puts TP groups on neighbouring GPUs (inside a node).
struct RankOrder {
    std::array<ParallelDim, kParallelDimCount> dims { ParallelDim::tp, ParallelDim::cp, ParallelDim::ep,
        ParallelDim::dp, ParallelDim::pp };
    bool operator==(const RankOrder&) const = default;
};
std::string to_string(const RankOrder& o);
// Parses "tp-cp-ep-dp-pp" (each dimension exactly once). Returns an explanation on failure.
std::optional<std::string> rank_order_from_string(std::string_view s, RankOrder& out);

struct Strategy {
    int tp = 1;
    int pp = 1;
    int dp = 1;
    int cp = 1;
    int ep = 1;
    int vpp = 1;
    int micro_batch = 1;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::none;
    // With selective recomputation under Megatron's policy: which submodules (bits of RecomputeModule).
    unsigned char recompute_modules = kDefaultRecomputeModules;
    bool recomputes(RecomputeModule m) const
    {
        return recompute == Recompute::selective && (recompute_modules & recompute_module_bit(m)) != 0;
    }
    int zero = 0; // 0 plain DP, 1 distributed optimizer, 2 + gradients, 3 + parameters (FSDP)
    Schedule schedule = Schedule::one_f_one_b;
    // The checked program of a custom schedule (interned, lives for the process); null otherwise.
    const ScheduleProgram* program = nullptr;
    // Settings of layer ranges (strategy.layers, spec/layer_ranges.hpp, interned); null for a plain plan.
    const LayerRanges* layers = nullptr;
    Optimizer optimizer = Optimizer::adam;
    bool offload_optimizer = false;
    // The optimizer step runs inside the backward, layer by layer, and frees each gradient at once
    // (no gradient buffer; needs one micro-batch per step).
    bool gradient_release = false;
    RankOrder rank_order {};
    int first_stage_layers = 0; // 0 = not set (as Megatron's --decoder-first-pipeline-num-layers)
    int last_stage_layers = 0;
    // Keys beyond the public scenario contract (docs/scenario-format.md lists every key):
    int expert_tp = 0; // 0 = same as tp (Megatron's --expert-tensor-parallel-size)
    CpKind cp_kind = CpKind::ring;
    bool overlap_grad_reduce = true; // Megatron --overlap-grad-reduce
    bool overlap_param_gather = true; // Megatron --overlap-param-gather (distributed optimizer / FSDP)
    bool tp_comm_overlap = false; // Transformer Engine userbuffers / async TP
    // Batch-level overlap of one micro-batch's expert all-to-all with another's compute (Megatron
    // --overlap-moe-expert-parallel-comm; DualPipe always does it).
    bool ep_overlap = false;
    // Tile-level overlap of the expert dispatch and combine with the grouped GEMMs on either side of them
    // (Comet / Flux kernels in Megatron-LM's MoE layer), as tp_comm_overlap does for TP.
    bool ep_tile_overlap = false;
    // Every layer's saved activations go to host memory after its forward and come back ahead of its
    // backward (Megatron-Core --cpu-offloading, Transformer Engine's CPU offload context); a range of
    // strategy.layers can set it for its own layers.
    bool offload_activations = false;
    // ZeRO-Infinity / FSDP CPU offload: parameters, gradients and optimizer states live in host memory,
    // each layer's parameters are fetched before its forward and its backward (needs ZeRO 3).
    bool offload_params = false;

    // Saturating products: absurd degrees must fail the GPU-count rule, not wrap around to pass it.
    long long model_parallel_gpus() const { return saturating_product(tp, pp, cp, 1); }
    long long total_gpus() const { return saturating_product(tp, pp, cp, dp); }
    static long long saturating_product(long long a, long long b, long long c, long long d)
    {
        constexpr long long kCap = 1LL << 62;
        long long r = 1;
        for (long long v : { a, b, c, d }) {
            if (v <= 0)
                return 0;
            // Overflow check without a division (a search checks this for every candidate).
            if (__builtin_mul_overflow(r, v, &r) || r > kCap)
                return kCap;
        }
        return r;
    }
    int effective_expert_tp() const { return expert_tp > 0 ? expert_tp : tp; }
    bool operator==(const Strategy&) const = default;
};

} // namespace parallax
