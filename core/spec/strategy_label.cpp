#include "spec/strategy_label.hpp"

#include "spec/layer_ranges.hpp"

#include <algorithm>
#include <map>

namespace parallax {

namespace {

std::string on_off(bool on)
{
    return on ? "on" : "off";
}

// 0 layers means "not set": the stage gets its even share.
std::string stage_layers(const char* which, int layers)
{
    return layers > 0 ? std::string(which) + " stage " + std::to_string(layers) + " layers"
                      : std::string(which) + " stage even";
}

// A setting that strategy_label leaves out, written the way a list shows it when it tells plans apart.
struct HiddenSetting {
    std::string (*text)(const Strategy&);
};

// In the order a reader looks for them: how CP and the experts are split first, tuning flags last.
const HiddenSetting kHiddenSettings[] = {
    { [](const Strategy& s) { return std::string(to_string(s.cp_kind)) + " CP"; } },
    { [](const Strategy& s) { return "expert TP " + std::to_string(s.effective_expert_tp()); } },
    { [](const Strategy& s) { return "EP overlap " + on_off(s.ep_overlap); } },
    { [](const Strategy& s) { return "TP comm overlap " + on_off(s.tp_comm_overlap); } },
    { [](const Strategy& s) { return "grad-reduce overlap " + on_off(s.overlap_grad_reduce); } },
    { [](const Strategy& s) { return "param-gather overlap " + on_off(s.overlap_param_gather); } },
    { [](const Strategy& s) { return "gradient release " + on_off(s.gradient_release); } },
    { [](const Strategy& s) { return "rank order " + to_string(s.rank_order); } },
    { [](const Strategy& s) { return stage_layers("first", s.first_stage_layers); } },
    { [](const Strategy& s) { return stage_layers("last", s.last_stage_layers); } },
};

} // namespace

std::string strategy_degrees_label(const Strategy& s)
{
    return "TP " + std::to_string(s.tp) + " × PP " + std::to_string(s.pp) + " × CP " + std::to_string(s.cp) + " × DP "
        + std::to_string(s.dp);
}

std::string strategy_label(const Strategy& s)
{
    std::string out = strategy_degrees_label(s);
    if (s.ep > 1)
        out += ", EP " + std::to_string(s.ep);
    if (s.vpp > 1)
        out += ", VPP " + std::to_string(s.vpp);
    out += ", mb " + std::to_string(s.micro_batch) + ", " + std::string(to_string(s.schedule));
    if (s.zero > 0)
        out += ", ZeRO " + std::to_string(s.zero);
    if (s.recompute != Recompute::none)
        out += ", " + std::string(to_string(s.recompute)) + " recompute";
    if (s.layers) {
        // A composite plan: what each range sets apart from the plan (a precision is named whenever set:
        // the plan's own lives in the training settings).
        for (const LayerRange& r : s.layers->ranges) {
            const std::string where = ", layers " + std::to_string(r.first) + "-" + std::to_string(r.last) + " ";
            const int tp = r.tp.value_or(s.tp), cp = r.cp.value_or(s.cp);
            if (tp != s.tp || cp != s.cp) // the stage's GPUs regrouped: name the data parallelism it implies
                out += where + "TP " + std::to_string(tp) + " × CP " + std::to_string(cp) + " × DP "
                    + std::to_string(static_cast<long long>(s.tp) * s.cp * s.dp / (static_cast<long long>(tp) * cp));
            if (r.recompute && *r.recompute != s.recompute)
                out += where + std::string(to_string(*r.recompute)) + " recompute";
            if (r.precision)
                out += where + std::string(to_string(*r.precision));
            if (r.expert_tp && *r.expert_tp != s.effective_expert_tp())
                out += where + "expert TP " + std::to_string(*r.expert_tp);
        }
    }
    if (s.sequence_parallel)
        out += ", SP";
    if (s.offload_optimizer)
        out += ", optimizer offload";
    if (s.offload_activations)
        out += ", activation offload";
    else if (s.layers)
        for (const LayerRange& r : s.layers->ranges)
            if (r.offload_activations.value_or(false))
                out += ", layers " + std::to_string(r.first) + "-" + std::to_string(r.last) + " activation offload";
    if (s.offload_params)
        out += ", parameter offload";
    if (s.optimizer != Optimizer::adam)
        out += ", " + std::string(to_string(s.optimizer));
    return out;
}

std::vector<std::string> distinguishing_labels(const std::vector<Strategy>& plans)
{
    std::vector<std::string> labels;
    labels.reserve(plans.size());
    for (const Strategy& s : plans)
        labels.push_back(strategy_label(s));
    // Each pass adds, to every group of plans that still read the same, the first hidden setting that
    // differs within the group; settings equal within a group stay hidden.
    for (const HiddenSetting& setting : kHiddenSettings) {
        std::map<std::string, std::vector<std::size_t>> groups;
        for (std::size_t i = 0; i < plans.size(); ++i)
            groups[labels[i]].push_back(i);
        bool all_unique = true;
        for (const auto& [label, members] : groups) {
            if (members.size() < 2)
                continue;
            all_unique = false;
            const std::string first = setting.text(plans[members.front()]);
            const bool differs = std::any_of(
                members.begin(), members.end(), [&](std::size_t i) { return setting.text(plans[i]) != first; });
            if (differs)
                for (std::size_t i : members)
                    labels[i] += ", " + setting.text(plans[i]);
        }
        if (all_unique)
            break;
    }
    return labels;
}

} // namespace parallax
