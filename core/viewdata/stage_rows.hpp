#pragma once
// The planner's per-stage view of a heterogeneous plan (docs/heterogeneous.md), as plain values: one
// row per pipeline stage with its layers, its replicas (group, GPU, TP), its micro-batch and busy
// times and its memory per replica against the GPU's capacity, the stage that paces the pipeline
// marked; and the edits the view offers, as new scenarios (moving layers between neighbouring stages,
// a replica's TP), so they go through the document and its undo stack.
#include "model/hetero_model.hpp"
#include "spec/scenario.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parallax {

struct StageReplicaCell {
    std::string group;
    std::string gpu;
    int tp = 1;
    long long microbatches = 0;
    double busy_s = 0;
    double memory_bytes = 0; // per GPU
    double capacity_bytes = 0;
    bool fits() const { return memory_bytes <= capacity_bytes; }
};

struct StageRow {
    int stage = 0;
    int first_layer = 0;
    int layers = 0;
    std::vector<StageReplicaCell> replicas;
    double microbatch_s = 0; // one micro-batch's forward and backward on the slowest replica
    double busy_s = 0; // the busiest replica's share of the step
    double busy_share = 0; // of the pacing stage's busy time, 0..1
    double memory_bytes = 0; // the fullest replica's, per GPU
    double capacity_bytes = 0; // that replica's GPU's
    bool critical = false; // paces the pipeline
    bool fits = true; // every replica fits its GPU
    int last_layer() const { return first_layer + layers - 1; }
};

// One row per stage of `s` with the numbers of `h` (its prediction); empty for a plain scenario.
std::vector<StageRow> stage_rows(const Scenario& s, const HeteroPrediction& h);

// `s` with `count` layers moved from stage `from` to its neighbour `to` (the boundary between them
// shifts); nothing when they are not neighbours or `from` would keep no layer.
std::optional<Scenario> move_stage_layers(const Scenario& s, int from, int to, int count = 1);
// `s` with replica `replica` of stage `stage` on `tp` GPUs; the hetero rules judge it when evaluated.
std::optional<Scenario> with_replica_tp(const Scenario& s, int stage, int replica, int tp);
// The TP degrees a replica on group `group` may take: powers of two up to its GPUs per node.
std::vector<int> replica_tp_choices(const Scenario& s, const std::string& group);

} // namespace parallax
