#pragma once
// A mixed-GPU plan (strategy.stages over cluster.groups, docs/heterogeneous.md) as launch files, where a
// stock framework can run it: one TP and one data-parallel degree for every stage, layers per stage as the
// plan has them (Megatron-LM's --decoder-first/last-pipeline-num-layers or --pipeline-model-parallel-layout,
// torchtitan's module_fqns_per_model_part), and the nodes ordered so that each stage's ranks land on its
// group's hosts. What a stock framework cannot run (another TP per stage or replica, batch shares by speed)
// is refused with the rule named.
#include "io/export/launch_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parallax {

// One node of the launch, in node-rank order: which group's host it is and which ranks it starts.
struct HeteroLaunchNode {
    std::string group;
    int node_in_group = 0; // index into the group's host list
    long long first_rank = 0;
    std::vector<int> stages; // the pipeline stages whose ranks it holds
};

// The uniform degrees a stock framework launches the mixed plan with, and where its ranks go. Ranks follow
// Megatron-Core's default order tp-cp-ep-dp-pp (parallel_state.initialize_model_parallel) and torchtitan's
// mesh ["pp", "dp_replicate", "dp_shard", "cp", "tp"], which agree: stage p's replica d holds ranks
// p*dp*tp + d*tp ... + tp - 1.
struct HeteroLaunchPlan {
    int tp = 1;
    int dp = 1;
    int pp = 1;
    int gpus_per_node = 8; // torchrun's --nproc_per_node on every node
    std::vector<int> stage_layers;
    std::vector<HeteroLaunchNode> nodes;
};

// The first rule `f`'s framework breaks to run the mixed plan `s`, or nothing when it runs it.
std::optional<Unsupported> hetero_launch_refusal(LaunchFormat f, const Scenario& s);
// The launch plan of a mixed plan that hetero_launch_refusal() accepts (throws InputError when its ranks
// cannot be placed).
HeteroLaunchPlan hetero_launch_plan(const Scenario& s);
// The plain scenario whose launch files run the mixed plan: uniform TP/PP/DP, the plan's edge stages' layers.
Scenario hetero_launch_equivalent(const Scenario& s, const HeteroLaunchPlan& p);
// The files of `export` for a mixed plan: the launch files with per-group host lists. Throws InputError
// (`file`, the key and the rule) when hetero_launch_refusal() names one.
LaunchConfig export_hetero_launch_config(
    LaunchFormat f, const Scenario& s, const LaunchSettings& o, const std::string& file);

// Megatron-LM's flags for the layers per stage: none when even, --decoder-first/last-pipeline-num-layers
// when the middle stages are even, else --pipeline-model-parallel-layout.
std::vector<std::string> hetero_megatron_split_flags(const std::vector<int>& stage_layers);
// The environment variable that holds a group's host names in the exported scripts ("h100" -> HOSTS_H100).
std::string hetero_hosts_variable(const std::string& group);

} // namespace parallax
