#pragma once
// Error bands: how far a prediction may be from what the cluster will measure, from the model's
// own out-of-sample errors on published runs of the same kind of workload.
//
// The residuals are ln(measured / predicted) of validation rows predicted without having seen
// their source (leave-one-source-out fits for the rows the shipped calibration was fitted to, the
// shipped calibration for held-out files). A workload's band comes from the residuals of the most
// specific class of rows that holds enough of them (same family, precision, context and GPU
// generation, then broader), as a Student-t prediction interval in log space, widened where the
// workload is far from every validation row; it always contains the prediction itself.
#include "spec/cluster_spec.hpp"
#include "spec/model_spec.hpp"
#include "spec/prediction.hpp"
#include "spec/training_spec.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace parallax {

// What kind of workload a run is, as far as the model's accuracy is concerned.
struct WorkloadClass {
    bool moe = false;
    bool fp8 = false; // 8-bit or narrower GEMMs (fp8, MXFP8, NVFP4)
    bool long_context = false; // sequences of kLongContextTokens or more
    GpuArchitecture architecture = GpuArchitecture::generic;
    bool operator==(const WorkloadClass&) const = default;
};

inline constexpr long long kLongContextTokens = 32768;

WorkloadClass workload_class(const ModelSpec& m, const TrainingSpec& t, const ClusterSpec& c);
// e.g. "MoE fp8 Hopper", "dense 16-bit long-context Ampere".
std::string workload_class_name(const WorkloadClass& k);

// The plan of a validation run, to find the measured run nearest to a predicted plan (nearest_run.hpp).
struct RunPlan {
    std::string model; // the model's name
    std::string gpu; // the GPU preset
    double params = 0; // total parameters; 0: the plan is not known
    long long seq_len = 0;
    int tp = 1;
    int pp = 1;
    int cp = 1;
    int ep = 1;
    int vpp = 1;
    long long dp = 1;
    std::string label; // strategy_label of the plan
    bool known() const { return params > 0; }
};

// One validation row's out-of-sample error.
struct BandResidual {
    std::string id;
    std::string source; // rows of one source are held out together
    WorkloadClass workload;
    long long gpus = 0;
    double log_error = 0; // ln(measured / predicted) tokens per second
    // The run's measured model-FLOPs utilisation (Megatron's FLOP count over the GPU's peak at the run's
    // precision); 0 when unknown (memory residuals).
    double measured_mfu = 0;
    RunPlan plan;
};

struct ErrorBandTable {
    double level = 0.8; // the share of real runs the interval should hold
    std::string provenance; // which runs, which calibration, when
    std::vector<BandResidual> residuals;
    // ln(measured / predicted) peak memory per GPU of the rows whose source states it. The memory
    // model has no fitted parameter, so every row is out of sample.
    std::vector<BandResidual> memory_residuals;
};

struct ErrorBand {
    double level = 0;
    // Measured throughput / predicted throughput at the interval's ends (low <= 1 <= high).
    double low_factor = 1;
    double high_factor = 1;
    int rows = 0; // residuals the band was built from
    int sources = 0;
    bool far_from_validation = false;
    // The highest MFU any validation run of the workload's class measured (0: none known): a plan
    // predicted above it is an extrapolation (prediction_interval widens the band down to it).
    double best_measured_mfu = 0;
    std::string basis; // what the band rests on, in words
    bool valid() const { return level > 0; }
};

// The band for a workload; `exclude_source` leaves one source's rows out (coverage checks).
ErrorBand error_band(
    const ErrorBandTable& table, const WorkloadClass& workload, long long gpus, const std::string& exclude_source = {});
// The same for the peak memory per GPU (measured / predicted memory at the interval's ends).
ErrorBand memory_error_band(
    const ErrorBandTable& table, const WorkloadClass& workload, long long gpus, const std::string& exclude_source = {});

// The band around one prediction's throughput and step time (none when the band is invalid). A
// prediction whose MFU (`mfu`, 0 = unknown) is above every measurement of its class has no run to vouch
// for that efficiency: the band's low end reaches down to the best measured efficiency, and says so.
PredictionInterval prediction_interval(const ErrorBand& band, double tokens_per_s, double step_time_s, double mfu = 0);
// Adds the memory band around the predicted peak memory per GPU (nothing when the band is invalid).
void add_memory_interval(PredictionInterval& interval, const ErrorBand& memory_band, double peak_memory_bytes);

// Whether two predictions' throughput bands overlap (false when either has none).
bool intervals_overlap(const PredictionInterval& a, const PredictionInterval& b);

// The band of the shipped table (presets/calibration/error-bands.json).
const ErrorBandTable& builtin_error_bands();

// Leave-one-source-out coverage: for each residual, whether the band built without its source
// holds its measurement.
struct BandCoverage {
    std::string group;
    int rows = 0;
    int covered = 0;
    double mean_width = 0; // high_factor / low_factor - 1, averaged
    double coverage() const { return rows > 0 ? static_cast<double>(covered) / rows : 0; }
};
std::vector<BandCoverage> band_coverage(const ErrorBandTable& table);
// The same for the memory bands (one group, "memory"), leaving out one run at a time.
BandCoverage memory_band_coverage(const ErrorBandTable& table);

nlohmann::json error_band_table_to_json(const ErrorBandTable& t);
// Throws InputError naming `file` and the key when the JSON is not an error-band table.
ErrorBandTable error_band_table_from_json(const nlohmann::json& j, const std::string& file);

// Two-sided Student-t quantile at probability p (0.5 < p < 1) with `dof` degrees of freedom.
double student_t_quantile(double p, int dof);

} // namespace parallax
