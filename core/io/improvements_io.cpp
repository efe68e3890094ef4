#include "io/improvements_io.hpp"

#include "io/number_format.hpp"

#include <cmath>

namespace parallax {

namespace {

double finite(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

} // namespace

nlohmann::json improvements_to_json(const ImprovementWaterfall& w)
{
    nlohmann::json list = nlohmann::json::array();
    for (const Improvement& i : w.steps) {
        nlohmann::ordered_json j;
        j["name"] = i.name;
        j["step_time_s_saved"] = finite(i.step_time_s_saved);
        j["energy_J_saved"] = finite(i.energy_J_saved);
        j["change"] = i.change;
        j["step_time_s"] = finite(i.step_time_s);
        j["energy_J"] = finite(i.energy_J);
        j["note"] = i.note;
        list.push_back(nlohmann::json(j));
    }
    return list;
}

std::string improvements_to_text(const ImprovementWaterfall& w)
{
    if (w.steps.empty())
        return {};
    std::string out = "choices around the degrees (each on top of the ones above; energy per step, all GPUs):\n";
    out += "  as given" + std::string(16, ' ') + format_number("%9.3f s", w.baseline_step_time_s)
        + format_number("  %12.0f J", w.baseline_energy_J) + (w.baseline_feasible ? "" : "   (does not fit)") + "\n";
    for (const Improvement& i : w.steps) {
        std::string name = i.name.substr(0, 22);
        name += std::string(24 - name.size(), ' ');
        out += "  " + name + format_number("%9.3f s", i.step_time_s) + format_number("  %12.0f J", i.energy_J)
            + format_number("   %+.3f s", -i.step_time_s_saved) + format_number("  %+.0f J", -i.energy_J_saved) + "\n";
        out += "    " + (i.change.empty() ? std::string() : i.change + ": ") + i.note + "\n";
    }
    return out;
}

} // namespace parallax
