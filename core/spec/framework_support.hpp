#pragma once
// What each training framework can run: the one capability table of Parallax. The search generates
// plans only from it (unless told --any-framework, when it labels each plan with the frameworks that
// run it), `export` refuses what the target framework cannot express, and the planner shows the same
// labels. Every entry says in a comment where it was checked.
//
// The table describes each framework as released today: Megatron-LM main (Aug 2026, also what NeMo /
// Megatron-Bridge drive), torchtitan v0.2.2 (the last release configured by TOML files) and
// Megatron-DeepSpeed main (Jul 2025) with DeepSpeed. FrameworkRelease names a framework and, later, one of
// its releases (training.software): today the release is carried but not consulted.
#include "spec/model_spec.hpp"
#include "spec/strategy.hpp"
#include "spec/training_spec.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace parallax {

inline constexpr std::array<Framework, 4> kAllFrameworks { Framework::megatron, Framework::torchtitan,
    Framework::torchtitan_compile, Framework::megatron_deepspeed };

struct FrameworkRelease {
    Framework framework = Framework::megatron;
    std::string_view release; // empty: the release the table describes (see above)
    constexpr FrameworkRelease(Framework f, std::string_view r = {}) // NOLINT: implicit from a Framework
        : framework(f)
        , release(r)
    {
    }
};

// One dimension at a time (the search filters its knobs with these).
bool framework_supports(FrameworkRelease f, Schedule s) noexcept;
bool framework_supports(FrameworkRelease f, CpKind k) noexcept;
bool framework_supports(FrameworkRelease f, Optimizer o) noexcept;
bool framework_supports(FrameworkRelease f, MoeDispatcher d) noexcept;
bool framework_supports(FrameworkRelease f, CudaGraphs g) noexcept;
// ZeRO stage (0..3) as the framework's data parallelism can shard; `dp_only` = data parallelism is the
// plan's only parallelism (torchtitan's DDP needs it).
bool framework_supports_zero(FrameworkRelease f, int zero, int pp, bool dp_only) noexcept;
// Expert tensor parallelism `expert_tp` (0 = the dense layers' tp) next to a tensor parallelism `tp`.
bool framework_supports_expert_tp(FrameworkRelease f, int expert_tp, int tp) noexcept;
bool framework_supports_sequence_parallel(FrameworkRelease f, bool sequence_parallel, int tp) noexcept;
bool framework_supports_tp_comm_overlap(FrameworkRelease f) noexcept;
bool framework_supports_ep_overlap(FrameworkRelease f) noexcept;
bool framework_supports_ep_tile_overlap(FrameworkRelease f) noexcept;
bool framework_supports_optimizer_offload(FrameworkRelease f) noexcept;
// Activation offload (Strategy::offload_activations or a range's) under the plan's pp and recompute setting.
bool framework_supports_activation_offload(FrameworkRelease f, int pp, Recompute recompute) noexcept;
bool framework_supports_param_offload(FrameworkRelease f) noexcept;
bool framework_supports_gradient_release(FrameworkRelease f) noexcept;
bool framework_supports(FrameworkRelease f, const RankOrder& o) noexcept;
bool framework_supports_stage_overrides(FrameworkRelease f) noexcept; // first/last stage layer counts
bool framework_supports(FrameworkRelease f, Precision p, Fp8Scaling scaling) noexcept;

// Something the framework cannot run, said so that a user can act on it.
struct Unsupported {
    std::string key; // the scenario key, "strategy.schedule"
    std::string feature; // what the plan asks for, "the zb-h1 schedule"
    std::string reason; // why the framework cannot, with the source
};

// The plan's choices (the strategy: what a search varies) the framework cannot run; empty when it runs
// them all. Allocation-free variant for the search's inner loop.
bool framework_runs(FrameworkRelease f, const Strategy& s, const ModelSpec& m) noexcept;
std::vector<Unsupported> unsupported_plan_features(FrameworkRelease f, const Strategy& s, const ModelSpec& m);
// The scenario's settings the framework cannot run: precision and fp8 recipe, MoE dispatcher, CUDA graphs
// and model features (attention kind, activation, MoE layout). These do not vary within a search.
std::vector<Unsupported> unsupported_settings(FrameworkRelease f, const TrainingSpec& t, const ModelSpec& m);

// The frameworks whose table accepts the plan's choices (search --any-framework labels).
std::vector<Framework> frameworks_running(const Strategy& s, const ModelSpec& m);
// "megatron, torchtitan" (or "none").
std::string frameworks_label(const std::vector<Framework>& fs);

} // namespace parallax
