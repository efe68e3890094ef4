#pragma once
// The serving error-band table from a validation run over measured serving rows: each predicted row's
// ln(measured / predicted) TTFT, TPOT and output tokens/s per GPU, with its model and deployment class.
#include "calibration/serving_error_band.hpp"
#include "io/serving_runs.hpp"

#include <string>

namespace parallax {

ServingBandTable build_serving_band_table(const ServingValidationReport& report, std::string provenance);

} // namespace parallax
