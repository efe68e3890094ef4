#include "log_parse/probe_parser.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>

namespace parallax::remote {

namespace {

// A probe record is ~300 bytes and flat; anything far larger or deeply nested is not ours, and refusing
// it up front keeps a hostile line from costing the JSON parser time or stack.
constexpr std::size_t kMaxProbeJsonBytes = 64 * 1024;
constexpr int kMaxProbeJsonDepth = 4;

bool shallow_enough(std::string_view json)
{
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (char c : json) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > kMaxProbeJsonDepth)
                return false;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return true;
}

std::optional<double> finite_number(const nlohmann::json& object, const char* key)
{
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number())
        return std::nullopt;
    const double v = it->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<std::int64_t> step_number(const nlohmann::json& object)
{
    const auto it = object.find("step");
    if (it == object.end())
        return std::nullopt;
    if (it->is_number_unsigned()) {
        const auto v = it->get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(INT64_MAX))
            return std::nullopt;
        return static_cast<std::int64_t>(v);
    }
    if (it->is_number_integer()) {
        const auto v = it->get<std::int64_t>();
        return v >= 0 ? std::optional<std::int64_t>(v) : std::nullopt;
    }
    return std::nullopt;
}

} // namespace

void ProbeParser::on_line(std::string_view line, bool complete)
{
    // A cut JSON object would not parse anyway; an incomplete line is never a record.
    if (!complete)
        return;
    const std::size_t marker = line.find(kProbeMarker);
    if (marker == std::string_view::npos)
        return;
    const std::string_view json = line.substr(marker + kProbeMarker.size());
    if (json.size() > kMaxProbeJsonBytes || !shallow_enough(json))
        return;
    const auto object = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
    if (!object.is_object())
        return;
    const auto kind = object.find("kind");
    if (kind == object.end() || !kind->is_string() || kind->get_ref<const std::string&>() != "step")
        return;
    const auto step = step_number(object);
    if (!step)
        return;
    ++m_records;
    StepRecord& r = m_table.at(*step);
    set_once(r.step_time_s, finite_number(object, "step_time_s"));
    set_once(r.tokens_per_s, finite_number(object, "tokens_per_s"));
    set_once(r.samples_per_s, finite_number(object, "samples_per_s"));
    set_once(r.tflops_per_gpu, finite_number(object, "tflops_per_gpu"));
    set_once(r.mfu, finite_number(object, "mfu"));
    set_once(r.power_W, finite_number(object, "power_W"));
    set_once(r.energy_J, finite_number(object, "energy_J"));
    set_once(r.loss, finite_number(object, "loss"));
    if (const auto memory = finite_number(object, "memory_GiB"))
        m_table.raise_memory(*step, *memory);
}

ParsedLog ProbeParser::result() const
{
    return m_table.build(LogFormat::probe, false);
}

} // namespace parallax::remote
