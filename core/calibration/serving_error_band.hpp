#pragma once
// Error bands of serving predictions: how far TTFT, TPOT and output tokens/s may be from what the
// deployment will measure, from the serving model's own errors on the measured serving rows
// (validation/measured-serving.json, validation/published-serving-throughput.json) of the same kind of
// deployment. A band is the empirical interval of ln(measured / predicted) over the most specific class
// of rows that holds enough of them (engine, dense or MoE, deployment mode; then broader), always
// containing the prediction itself. Its coverage is checked leaving each model's rows out in turn.
#include "calibration/error_band.hpp"
#include "serving/serving_spec.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace parallax {

enum class ServingMetric : unsigned char { ttft, tpot, throughput };

// What kind of deployment a prediction is, as far as the serving model's accuracy is concerned.
struct ServingBandClass {
    ServingEngine engine = ServingEngine::vllm;
    bool moe = false;
    // "aggregated", "disaggregated", "static batch" or "offline" (maximum throughput)
    std::string mode = "aggregated";
    bool operator==(const ServingBandClass&) const = default;
};

// e.g. "vllm MoE aggregated".
std::string serving_band_class_name(const ServingBandClass& k);
ServingBandClass serving_band_class(const ServingScenario& s);

// One measured row's errors: ln(measured / predicted); NaN where the row does not measure the metric.
struct ServingBandResidual {
    std::string model; // rows of one model are held out together
    ServingBandClass klass;
    double log_ttft = 0;
    double log_tpot = 0;
    double log_throughput = 0;
    double log_error(ServingMetric m) const;
};

struct ServingBandTable {
    double level = 0.8; // the share of a new deployment's measurements the band should hold
    // The share of the residuals between the band's ends. Wider than `level`: a model the table has not seen
    // is off by more than the rows of the models it has (its own bias on top of their spread); 0.9, the 5th to
    // 95th percentiles, is what holds 80% of each model's rows when they are left out (serving_band_coverage).
    double quantile_level = 0.9;
    std::string provenance;
    std::vector<ServingBandResidual> residuals;
};

struct ServingBand {
    double level = 0;
    double low_factor = 1; // measured / predicted at the interval's low end (<= 1)
    double high_factor = 1; // and at its high end (>= 1)
    int rows = 0;
    std::string basis; // which rows the band rests on, in words
    bool valid() const { return level > 0; }
};

// The band for one metric of a class; `exclude_model` leaves that model's rows out (coverage checks).
ServingBand serving_error_band(const ServingBandTable& table, const ServingBandClass& klass, ServingMetric metric,
    const std::string& exclude_model = {});

// Leave-one-model-out coverage of each metric's bands over the table's rows, one group per metric ("ttft",
// "tpot", "throughput").
std::vector<BandCoverage> serving_band_coverage(const ServingBandTable& table);

nlohmann::json serving_band_table_to_json(const ServingBandTable& t);
// Throws InputError naming `file` and the key when the JSON is not a serving band table.
ServingBandTable serving_band_table_from_json(const nlohmann::json& j, const std::string& file);

// The shipped table (presets/calibration/serving-error-bands.json); empty when it is missing.
const ServingBandTable& builtin_serving_error_bands();
// The shipped bands of a class, computed once per class (the search asks for them per deployment).
struct ServingBands {
    ServingBand ttft, tpot, throughput;
};
const ServingBands& builtin_serving_bands(const ServingBandClass& klass);

} // namespace parallax
