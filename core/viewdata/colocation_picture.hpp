#pragma once
// What a view draws of a co-location plan: the pool as GPU slots, each labelled with the model it serves
// and that model's residency; each model's throughput-against-residency curve with its knee and where it
// sits on it; and each model's preemption cost as stacked parts (weights, KV, warm-up).
#include "serving/colocation.hpp"

#include <string>
#include <vector>

namespace parallax {

struct ColocationPicture {
    struct Slot {
        std::string group;
        std::string gpu;
        int index = 0; // within its group, 0-based
        int model = -1; // index into models, -1 = idle
        int instance = -1; // which replica of that model
        double residency = 1;
    };
    struct Curve {
        std::string model;
        std::vector<double> residency; // x, 1 down to 0
        std::vector<double> relative_throughput; // y
        double knee_residency = 1;
        double placed_residency = 1; // the marker
    };
    struct CostBar {
        std::string model;
        double weights_s = 0;
        double kv_s = 0;
        double warm_up_s = 0;
    };
    std::vector<std::string> models;
    std::vector<Slot> gpus; // group by group, in the pool's order
    std::vector<Curve> curves; // placed models only
    std::vector<CostBar> costs;
    double max_cost_s = 0; // the bars' common scale
};

ColocationPicture colocation_picture(const ColocationResult& r);

} // namespace parallax
