#pragma once
// Measured serving runs (validation/measured-serving.json, one object per row with the engine, model,
// GPU, parallel layout, precision, workload and the measured TTFT/TPOT, or an offline run's output
// tokens/s as validation/published-serving-throughput.json gives them): each row becomes a serving
// scenario through the same reader as a scenario file, is predicted, and the errors are summarised per
// source, engine, GPU and model. Rows that cannot be modelled are skipped with the reason.
#include "io/preset_catalog.hpp"
#include "serving/serving_spec.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parallax {

struct ServingRun {
    std::string id;
    std::string source; // short group: "aiconfigurator", "splitwise"
    std::string engine;
    std::string gpu;
    std::string model;
    std::string mode; // "aggregated", "static batch", "disaggregated"
    int gpus = 0; // every GPU of the deployment (both pools when disaggregated)
    ServingScenario scenario;
    // Offline maximum-throughput rows (trtllm-bench throughput) state the output tokens/s only.
    bool latencies_measured = true;
    double ttft_ms = 0;
    double tpot_ms = 0;
    // Output tokens/s per GPU: as the row states it, or implied by the measured latencies at the row's
    // concurrency (Little's law: concurrency x osl / (TTFT + (osl - 1) TPOT)).
    double tokens_per_s_per_gpu = 0;
    std::vector<std::string> assumptions;
};

struct ServingSkip {
    std::string id;
    std::string reason;
};

struct ServingRunResult {
    const ServingRun* run = nullptr;
    bool feasible = false;
    double ttft_ms = 0;
    double tpot_ms = 0;
    double tokens_per_s_per_gpu = 0;
    double ttft_error = 0; // predicted / measured - 1
    double tpot_error = 0;
    double throughput_error = 0;
    double running_batch = 0; // predicted, per instance: what explains a TTFT that includes a queue
    long long max_batch_by_memory = 0;
    double queued_requests = 0;
};

struct ServingErrorSummary {
    int rows = 0;
    int latency_rows = 0; // of which measured TTFT and TPOT (the latency MAPEs are over these)
    double ttft_mape = 0;
    double tpot_mape = 0;
    double throughput_mape = 0;
    double ttft_median = 0;
    double tpot_median = 0;
};

struct ServingValidationReport {
    std::vector<ServingRunResult> rows;
    std::vector<ServingSkip> skipped;
    ServingErrorSummary overall;
    std::map<std::string, ServingErrorSummary> by_source, by_engine, by_gpu, by_model, by_mode;
};

std::vector<ServingRun> read_serving_runs(const nlohmann::json& rows, const std::string& file,
    const PresetCatalog& catalog, std::vector<ServingSkip>& skipped);
// An array whose rows carry "workload" and "result": the measured-serving format.
bool is_serving_runs_file(const nlohmann::json& j);

ServingValidationReport run_serving_validation(const std::vector<ServingRun>& runs, std::vector<ServingSkip> skipped);
nlohmann::json serving_validation_to_json(const ServingValidationReport& r);
std::string serving_validation_to_markdown(const ServingValidationReport& r);

} // namespace parallax
