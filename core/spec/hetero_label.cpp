#include "spec/hetero_label.hpp"

#include <algorithm>
#include <cctype>

namespace parallax {

std::string gpu_short_name(const std::string& gpu)
{
    const auto dash = gpu.find('-');
    if (dash == std::string::npos)
        return gpu;
    const std::string first = gpu.substr(0, dash);
    if (std::any_of(first.begin(), first.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
        return first;
    const auto next = gpu.find('-', dash + 1);
    return gpu.substr(0, next);
}

std::string stage_replicas_label(const PipelineStageSpec& stage)
{
    std::string out;
    for (const StageReplica& r : stage.replicas)
        out += (out.empty() ? "" : " + ") + r.group + " TP" + std::to_string(r.tp);
    return out;
}

std::string hetero_plan_label(const Scenario& s)
{
    std::string layers, replicas;
    for (const PipelineStageSpec& st : s.stages) {
        layers += (layers.empty() ? "" : " | ") + std::to_string(st.layers);
        replicas += (replicas.empty() ? "" : " | ") + stage_replicas_label(st);
    }
    const Strategy& st = s.strategy;
    std::string out = "stages " + layers + " layers: " + replicas + ", mb " + std::to_string(st.micro_batch) + ", "
        + std::string(to_string(st.schedule));
    if (st.zero > 0)
        out += ", ZeRO " + std::to_string(st.zero);
    if (st.recompute != Recompute::none)
        out += ", " + std::string(to_string(st.recompute)) + " recompute";
    if (st.sequence_parallel)
        out += ", SP";
    return out;
}

} // namespace parallax
