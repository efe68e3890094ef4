#include "runs/measurement_sync.hpp"

namespace parallax::remote {

namespace {

MeasurementDelta everything(const Measurements& now)
{
    MeasurementDelta d;
    d.replace = true;
    d.steps = now.parsed.steps;
    d.benches = now.benches;
    return d;
}

} // namespace

MeasurementDelta StoredMeasurements::delta_to(const Measurements& now)
{
    const std::vector<StepRecord>& steps = now.parsed.steps;
    // Parsers only add steps (at the end) and fill in fields of earlier ones; fewer means another parse.
    const bool fresh = !m_synced || steps.size() < m_steps.size() || now.benches.size() < m_benches;
    MeasurementDelta d;
    if (fresh) {
        d = everything(now);
    } else {
        for (std::size_t i = 0; i < steps.size(); ++i) {
            if (i >= m_steps.size() || !(steps[i] == m_steps[i]))
                d.steps.push_back(steps[i]);
        }
        d.benches.assign(now.benches.begin() + static_cast<std::ptrdiff_t>(m_benches), now.benches.end());
    }
    d.log_format = now.parsed.recognised() ? log_format_name(now.parsed.format) : std::string_view();
    d.summary_json = now.summary_json().dump();
    d.run_info_json = now.run_info_json;
    m_steps = steps;
    m_benches = now.benches.size();
    m_synced = true;
    return d;
}

void StoredMeasurements::reset()
{
    m_steps.clear();
    m_benches = 0;
    m_synced = false;
}

} // namespace parallax::remote
