#pragma once
// A co-location scenario (docs/serving.md, "Co-location"): several models, each with its own serving
// settings, workload and SLO, sharing one pool of GPUs that may mix types (cluster.groups). Plain
// values; the reader is io/colocation_io.hpp, the planner serving/colocation.hpp.
#include "serving/host_link.hpp"
#include "serving/preemption.hpp"
#include "serving/serving_spec.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parallax {

// Where a model runs: `replicas` instances of `tp` GPUs of one node group, `residency` of its layers'
// weights on the GPUs (the rest streamed from host memory).
struct Placement {
    std::string group;
    int tp = 1;
    int replicas = 1;
    double residency = 1.0;
    int gpus() const { return tp * replicas; }
};

struct ColocatedModel {
    std::string name;
    ModelSpec model;
    std::string model_ref; // preset name as written, empty when inline
    ServingSpec serving;
    double priority = 1.0; // weight of its normalised throughput in the objective
    // Parts of the placement the scenario fixes; the planner chooses the rest.
    std::optional<std::string> group;
    std::optional<int> tp;
    std::optional<int> replicas;
    std::optional<double> residency;
};

struct ColocationScenario {
    int schema = 1;
    std::string description;
    ClusterSpec cluster; // plain (one group, named "pool") or cluster.groups
    ScenarioRefs refs;
    std::vector<ColocatedModel> models;
    std::map<std::string, HostLink> host_links; // by group name; absent: default_host_link(gpu)
    PreemptionSettings preemption;
};

// The pool's node groups: cluster.groups, or the plain cluster as one group named "pool".
std::vector<NodeGroup> pool_groups(const ClusterSpec& c);
// The host link of a group: the scenario's, else the GPU's default.
HostLink group_host_link(const ColocationScenario& s, const NodeGroup& g);

} // namespace parallax
