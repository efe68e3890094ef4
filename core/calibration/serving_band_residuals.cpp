#include "calibration/serving_band_residuals.hpp"

#include <cmath>
#include <limits>

namespace parallax {

ServingBandTable build_serving_band_table(const ServingValidationReport& report, std::string provenance)
{
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    // error = predicted / measured - 1, so ln(measured / predicted) = -ln(1 + error).
    const auto log_ratio = [](double error) { return error > -1.0 ? -std::log1p(error) : kNaN; };
    ServingBandTable t;
    t.provenance = std::move(provenance);
    for (const ServingRunResult& r : report.rows) {
        if (!r.feasible || r.run == nullptr)
            continue;
        ServingBandResidual x;
        x.model = r.run->model;
        x.klass = serving_band_class(r.run->scenario);
        x.log_ttft = r.run->latencies_measured ? log_ratio(r.ttft_error) : kNaN;
        x.log_tpot = r.run->latencies_measured ? log_ratio(r.tpot_error) : kNaN;
        x.log_throughput = log_ratio(r.throughput_error);
        t.residuals.push_back(std::move(x));
    }
    return t;
}

} // namespace parallax
