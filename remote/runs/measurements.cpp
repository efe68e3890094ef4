#include "runs/measurements.hpp"

#include "log_parse/training_log_parser.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace parallax::remote {

namespace {

constexpr std::string_view kMarker = "PARALLAX_PROBE ";

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

void ProbeRecordScanner::feed(std::string_view bytes, Measurements& into)
{
    m_splitter.feed(bytes, [&](std::string_view line, bool complete) {
        if (complete) // a line over kMaxRecordBytes arrives cut: not a record
            read_line(line, into);
    });
}

void ProbeRecordScanner::read_line(std::string_view line, Measurements& m)
{
    const auto at = line.find(kMarker);
    if (at == std::string_view::npos)
        return;
    std::string_view body = line.substr(at + kMarker.size());
    while (!body.empty() && (body.back() == '\r' || body.back() == ' '))
        body.remove_suffix(1);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_object())
        return;
    const std::string kind = text(j, "kind");
    if (kind == "bench") {
        const auto t = number(j, "time_s");
        if (!t)
            return;
        BenchRecord b;
        b.seq = m_seq++;
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

Measurements parse_measurements(std::string_view log, LogFormat format)
{
    MeasurementCollector c(format);
    c.feed(log);
    return c.finish();
}

MeasurementCollector::MeasurementCollector(LogFormat format)
    : m_format(format)
    , m_parser(std::make_unique<TrainingLogParser>(format))
{
}

MeasurementCollector::~MeasurementCollector() = default;

void MeasurementCollector::feed(std::string_view bytes)
{
    if (m_finished)
        throw std::logic_error("MeasurementCollector: fed after finish()");
    m_parser->feed(bytes);
    if (m_format == LogFormat::probe || m_format == LogFormat::auto_detect)
        m_probe.feed(bytes, m_probe_records);
    m_size_bytes += bytes.size();
    if (bytes.size() >= kTailBytes) {
        m_tail.assign(bytes.substr(bytes.size() - kTailBytes));
    } else {
        m_tail.append(bytes);
        if (m_tail.size() > 2 * kTailBytes) // trimmed now and then, not at every feed
            m_tail.erase(0, m_tail.size() - kTailBytes);
    }
}

std::string_view MeasurementCollector::tail(std::size_t n) const
{
    n = std::min({ n, kTailBytes, m_tail.size() });
    return std::string_view(m_tail).substr(m_tail.size() - n);
}

void MeasurementCollector::clear()
{
    m_parser = std::make_unique<TrainingLogParser>(m_format);
    m_probe = ProbeRecordScanner();
    m_probe_records = Measurements();
    m_tail.clear();
    m_size_bytes = 0;
    m_finished = false;
}

Measurements MeasurementCollector::snapshot() const
{
    Measurements m = m_probe_records;
    m.parsed = m_parser->current();
    return m;
}

Measurements MeasurementCollector::finish()
{
    m_finished = true;
    Measurements m = m_probe_records;
    m.parsed = m_parser->finish();
    return m;
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
