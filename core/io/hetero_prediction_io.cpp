#include "io/hetero_prediction_io.hpp"

#include "io/prediction_io.hpp"
#include "spec/units.hpp"

#include <cstdio>

namespace parallax {

using nlohmann::json;

json hetero_prediction_to_json(const HeteroPrediction& h)
{
    json j = prediction_to_json(h.prediction);
    json stages = json::array();
    for (const HeteroStageReport& st : h.stages) {
        json replicas = json::array();
        for (const HeteroReplicaReport& r : st.replicas)
            replicas.push_back({ { "group", r.group }, { "gpu", r.gpu }, { "tp", r.tp },
                { "microbatches", r.microbatches }, { "forward_s", r.forward_s }, { "backward_s", r.backward_s },
                { "busy_s", r.busy_s }, { "peak_memory_GiB", r.peak_memory_bytes / units::kGiB },
                { "capacity_GiB", r.capacity_bytes / units::kGiB } });
        stages.push_back({ { "stage", st.stage }, { "layers", st.layers }, { "microbatch_s", st.microbatch_s },
            { "busy_s", st.busy_s }, { "grad_sync_s", st.grad_sync_s }, { "mixed_replicas", st.mixed },
            { "replicas", replicas } });
    }
    j["heterogeneous"] = { { "critical_stage", h.critical_stage }, { "gpus_used", h.gpus_used }, { "stages", stages } };
    return j;
}

std::string hetero_prediction_to_text(const Scenario& s, const HeteroPrediction& h)
{
    const Prediction& p = h.prediction;
    std::string out;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s on %lld GPUs of %zu node groups (%zu pipeline stages)\n", s.model.name.c_str(),
        h.gpus_used, s.cluster.groups.size(), s.stages.size());
    out += buf;
    std::snprintf(buf, sizeof buf,
        "feasible   %s\nstep time        %10.3f s\ntokens/s         %10.0f\nTFLOP/s per GPU  %10.1f   MFU %.1f%% "
        "(of the used GPUs' mean peak)\nbubble           %9.1f%%\nmemory peak      %10.1f GiB of %.1f GiB "
        "(stage %d)\npower            %10.0f W avg per GPU, %.3f J/token\n",
        p.feasible ? "yes" : "no", p.step_time_s, p.tokens_per_s, p.tflops_per_gpu, 100 * p.mfu,
        100 * p.bubble_fraction, p.peak_memory_bytes / units::kGiB, p.capacity_bytes / units::kGiB, p.peak_memory_stage,
        p.power.avg_W_per_gpu, p.power.energy_J_per_token);
    out += buf;
    out += "\nstage layers  group         GPU               TP  micro-batches  fwd+bwd/mb   busy     grad sync  "
           "memory\n";
    for (const HeteroStageReport& st : h.stages) {
        for (const HeteroReplicaReport& r : st.replicas) {
            std::snprintf(buf, sizeof buf,
                "%s%4d %6d  %-12s  %-16s %3d  %13lld  %8.3f s  %7.2f s  %7.3f s  %5.1f/%.1f GiB\n",
                st.stage == h.critical_stage ? "*" : " ", st.stage, st.layers, r.group.c_str(), r.gpu.c_str(), r.tp,
                r.microbatches, r.forward_s + r.backward_s, r.busy_s, st.grad_sync_s, r.peak_memory_bytes / units::kGiB,
                r.capacity_bytes / units::kGiB);
            out += buf;
        }
    }
    out += "* the stage that paces the pipeline\n";
    for (const std::string& w : p.warnings)
        out += "warning: " + w + "\n";
    return out;
}

} // namespace parallax
