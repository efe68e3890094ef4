#include "viewdata/calibration_residuals.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

double number(const nlohmann::json& j, const char* key)
{
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

} // namespace

CalibrationResiduals calibration_residuals(const Calibration& c)
{
    CalibrationResiduals out;
    const nlohmann::json& p = c.provenance;
    if (!p.is_object() || !p.contains("runs") || !p["runs"].is_array())
        return out;
    double ss_before = 0;
    double ss_after = 0;
    for (const nlohmann::json& r : p["runs"]) {
        if (!r.is_object())
            continue;
        CalibrationResiduals::Run run;
        run.run_id = r.contains("run") && r["run"].is_string() ? r["run"].get<std::string>() : std::string("?");
        run.log_before = number(r, "log_error_before");
        run.log_after = number(r, "log_error_after");
        run.error_before = std::exp(run.log_before) - 1;
        run.error_after = std::exp(run.log_after) - 1;
        ss_before += run.log_before * run.log_before;
        ss_after += run.log_after * run.log_after;
        out.max_abs_log = std::max({ out.max_abs_log, std::fabs(run.log_before), std::fabs(run.log_after) });
        out.runs.push_back(std::move(run));
    }
    if (!out.runs.empty()) {
        const double n = static_cast<double>(out.runs.size());
        out.rms_before = std::sqrt(ss_before / n);
        out.rms_after = std::sqrt(ss_after / n);
    }
    return out;
}

} // namespace parallax
