#include "calibration/nearest_run.hpp"

#include "model/model_math.hpp"

#include <cmath>
#include <cstdio>

namespace parallax {

namespace {

// How much each difference counts, in units of a doubling-ish step (|ln ratio|): the model's size and
// the sequence decide most of the kernels' shapes; TP, PP, CP and EP decide the communication and the
// bubble; the GPU count (scale) and virtual stages less. A different GPU generation, a dense model
// against an MoE one, or 8-bit against 16-bit GEMMs are each worth a few such steps.
constexpr double kParamsWeight = 2.0;
constexpr double kSeqWeight = 1.0;
constexpr double kDegreeWeight = 1.0;
constexpr double kScaleWeight = 0.5;
constexpr double kVppWeight = 0.5;
constexpr double kArchitectureMismatch = 1.5;
constexpr double kMoeMismatch = 3.0;
constexpr double kPrecisionMismatch = 1.0;
// Beyond this the nearest run differs in about three doublings of size or degrees, or in hardware and kind:
// it is named, but as a loose match.
constexpr double kLooseMatchDistance = 3.0;

double log_gap(double a, double b)
{
    return a > 0 && b > 0 ? std::abs(std::log(a / b)) : 0.0;
}

} // namespace

std::optional<MeasuredRunMatch> nearest_measured_run(const ErrorBandTable& table, const ModelSpec& model,
    const TrainingSpec& training, const ClusterSpec& cluster, const Strategy& s)
{
    const WorkloadClass workload = workload_class(model, training, cluster);
    const double params = total_params(model);
    const double gpus = static_cast<double>(cluster.total_gpus());
    std::optional<MeasuredRunMatch> best;
    for (const BandResidual& r : table.residuals) {
        const RunPlan& pl = r.plan;
        if (!pl.known())
            continue;
        double d = kParamsWeight * log_gap(params, pl.params)
            + kSeqWeight * log_gap(static_cast<double>(training.seq_len), static_cast<double>(pl.seq_len))
            + kScaleWeight * log_gap(gpus, static_cast<double>(r.gpus)) + kVppWeight * log_gap(s.vpp, pl.vpp);
        for (const auto& [mine, theirs] :
            { std::pair { s.tp, pl.tp }, { s.pp, pl.pp }, { s.cp, pl.cp }, { s.ep, pl.ep } })
            d += kDegreeWeight * log_gap(mine, theirs);
        if (r.workload.architecture != workload.architecture)
            d += kArchitectureMismatch;
        if (r.workload.moe != workload.moe)
            d += kMoeMismatch;
        if (r.workload.fp8 != workload.fp8)
            d += kPrecisionMismatch;
        // Ties go to the first run of the table (its order is the validation files' order).
        if (!best || d < best->distance) {
            best = MeasuredRunMatch { r.id, pl, r.gpus, std::exp(-r.log_error) - 1.0, d };
        }
    }
    return best;
}

std::string measured_run_match_text(const MeasuredRunMatch& m)
{
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100 * std::abs(m.predicted_vs_measured));
    return m.id + " (" + m.plan.model + ", " + m.plan.label + " on " + std::to_string(m.gpus) + " x " + m.plan.gpu
        + "): predicted " + pct + (m.predicted_vs_measured >= 0 ? " above" : " below") + " its measurement"
        + (m.distance > kLooseMatchDistance ? "; a loose match (it differs in size, degrees or hardware)" : "");
}

nlohmann::json measured_run_match_json(const MeasuredRunMatch& m)
{
    return { { "id", m.id }, { "model", m.plan.model }, { "plan", m.plan.label }, { "gpus", m.gpus },
        { "gpu", m.plan.gpu }, { "predicted_vs_measured", m.predicted_vs_measured }, { "distance", m.distance },
        { "loose", m.distance > kLooseMatchDistance } };
}

} // namespace parallax
