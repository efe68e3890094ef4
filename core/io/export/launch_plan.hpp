#pragma once
// What the launch-file writers read off a plan in the frameworks' own terms: the expert TP, whether data is
// sharded, the virtual stages' layer counts, how Megatron is told an uneven pipeline, which layers are MoE.
#include "spec/scenario.hpp"

#include <string>
#include <vector>

namespace parallax::launch_plan {

int etp_of(const Strategy& st);
bool data_sharded(const Strategy& st);
// Layers per virtual stage in model order (pp x vpp entries).
std::vector<int> chunk_layer_counts(const Scenario& s);

// How the pipeline's layers are told to Megatron: nothing (even), first/last stage counts (vpp 1, the
// middle stages even), or the full layout.
struct MegatronSplit {
    bool even = true;
    int first = 0; // --decoder-first-pipeline-num-layers (0 = not given)
    int last = 0;
    std::string layout; // --pipeline-model-parallel-layout ("" = not needed)
};
MegatronSplit megatron_split(const Scenario& s);
// The split of layer counts per virtual stage (model order) that are not all equal.
MegatronSplit megatron_split_of_uneven(const std::vector<int>& chunks, int vpp);

// Megatron's --moe-layer-freq as a Python list expression ("([0]*3+[1]*58)").
std::string moe_layer_pattern(const ModelSpec& m);
bool every_layer_moe(const ModelSpec& m);

// A schedule program goes to torchtitan as the schedule CSV beside its TOML (looped layouts only).
inline constexpr const char* kTorchtitanScheduleCsv = "pipeline_schedule.csv";
bool has_torchtitan_csv(const Strategy& st);

} // namespace parallax::launch_plan
