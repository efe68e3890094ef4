#include "runs/measurements.hpp"

#include "log_parse/training_log_parser.hpp"

#include <cmath>

namespace parallax::remote {

namespace {

constexpr std::string_view kMarker = "PARALLAX_PROBE ";
// As the probe parser: a record is a few hundred bytes; longer lines are not ours.
constexpr std::size_t kMaxRecordBytes = 64 * 1024;

std::optional<double> number(const nlohmann::json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number())
        return std::nullopt;
    const double v = it->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string text(const nlohmann::json& j, const char* key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void scan_probe_records(std::string_view log, Measurements& m)
{
    std::size_t pos = 0;
    int seq = 0;
    while (pos < log.size()) {
        std::size_t end = log.find('\n', pos);
        if (end == std::string_view::npos)
            break; // an unterminated last line may be cut: wait for its end
        const std::string_view line = log.substr(pos, end - pos);
        pos = end + 1;
        const auto at = line.find(kMarker);
        if (at == std::string_view::npos || line.size() > kMaxRecordBytes)
            continue;
        std::string_view body = line.substr(at + kMarker.size());
        while (!body.empty() && (body.back() == '\r' || body.back() == ' '))
            body.remove_suffix(1);
        const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
        if (!j.is_object())
            continue;
        const std::string kind = text(j, "kind");
        if (kind == "bench") {
            const auto t = number(j, "time_s");
            if (!t)
                continue;
            BenchRecord b;
            b.seq = seq++;
            b.op = text(j, "op");
            b.name = text(j, "name");
            b.group = text(j, "group");
            b.time_s = *t;
            b.bytes = number(j, "bytes");
            b.tflops = number(j, "tflops");
            b.bus_GBps = number(j, "bus_GBps");
            b.json = j.dump();
            m.benches.push_back(std::move(b));
        } else if (kind == "run") {
            m.run_info_json = j.dump();
        } else if (kind == "done") {
            m.done_exit = text(j, "exit");
            m.done_error = text(j, "error");
        }
    }
}

void put_if(nlohmann::json& j, const char* key, const std::optional<double>& v)
{
    if (v)
        j[key] = *v;
}

} // namespace

LogFormat log_format_for(JobFramework f)
{
    switch (f) {
    case JobFramework::probe:
        return LogFormat::probe;
    case JobFramework::megatron:
        return LogFormat::megatron;
    case JobFramework::torchtitan:
        return LogFormat::torchtitan;
    case JobFramework::deepspeed:
        return LogFormat::auto_detect;
    }
    return LogFormat::auto_detect;
}

Measurements parse_measurements(std::string_view log, LogFormat format)
{
    Measurements m;
    m.parsed = parse_training_log(log, format);
    if (format == LogFormat::probe || format == LogFormat::auto_detect)
        scan_probe_records(log, m);
    return m;
}

Measurements MeasurementCollector::snapshot() const
{
    return parse_measurements(m_log, m_format);
}

nlohmann::json Measurements::summary_json() const
{
    nlohmann::json j = nlohmann::json::object();
    j["format"] = parsed.recognised() ? std::string(log_format_name(parsed.format)) : std::string();
    j["steps"] = parsed.summary.steps;
    put_if(j, "step_time_s", parsed.summary.step_time_s);
    put_if(j, "tokens_per_s", parsed.summary.tokens_per_s);
    put_if(j, "tflops_per_gpu", parsed.summary.tflops_per_gpu);
    put_if(j, "peak_memory_GiB", parsed.summary.peak_memory_GiB);
    put_if(j, "power_W", parsed.summary.power_W);
    if (parsed.step_time_from_timestamps)
        j["step_time_from_timestamps"] = true;
    j["benchmarks"] = benches.size();
    if (done_exit)
        j["probe_exit"] = *done_exit;
    if (!done_error.empty())
        j["probe_error"] = done_error;
    return j;
}

} // namespace parallax::remote
