#pragma once
// The cluster grid of a mixed cluster (cluster.groups), as plain values: every node of every group
// with its GPUs, each GPU marked with the stage and replica that hold it (replicas take consecutive
// GPUs of their group in stage order, as a launcher ranks them) or idle, and the GPU types with
// their counts for the legend. The view colours a GPU by its type.
#include "spec/scenario.hpp"

#include <string>
#include <vector>

namespace parallax {

struct GroupGridGpu {
    int stage = -1; // -1: no replica holds it
    int replica = -1;
    bool idle() const { return stage < 0; }
};

struct GroupGridGroup {
    std::string name;
    std::string gpu;
    int type = 0; // index into GroupGrid::types
    int gpus_per_node = 1;
    std::vector<std::vector<GroupGridGpu>> nodes; // [node][gpu]
};

struct GroupGridType {
    std::string gpu;
    long long gpus = 0;
    long long used = 0; // held by a replica
};

struct GroupGrid {
    std::vector<GroupGridType> types; // in the order the groups first name them
    std::vector<GroupGridGroup> groups;
};

// Empty for a cluster without groups.
GroupGrid group_grid(const Scenario& s);

} // namespace parallax
