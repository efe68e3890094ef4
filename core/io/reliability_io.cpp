#include "io/reliability_io.hpp"

#include "io/json_reader.hpp"
#include "model/goodput.hpp"
#include "model/goodput_plan.hpp"

namespace parallax {

using nlohmann::json;

namespace {

constexpr double kMaxRatePerHour = 1000; // far above any fleet: one interruption every 3.6 s per GPU
constexpr double kMaxSeconds = 1e9; // ~32 years
constexpr double kMaxGBps = 1e6;

std::optional<double> read_interval(JsonObjectReader& r)
{
    const json* v = r.raw("checkpoint_interval_s");
    if (!v || (v->is_string() && v->get<std::string>() == "auto"))
        return std::nullopt;
    if (v->is_string())
        r.fail("checkpoint_interval_s", "must be a number of seconds or \"auto\", got " + v->dump());
    return r.get_number("checkpoint_interval_s", 1e-3, kMaxSeconds);
}

} // namespace

ReliabilitySpec read_reliability(const json& j, const std::string& file)
{
    JsonObjectReader r(j, file, "reliability");
    ReliabilitySpec spec;
    spec.failure_rate_per_gpu_hour
        = r.get_number("failure_rate_per_gpu_hour", 0, kMaxRatePerHour, kLlama3InterruptionsPerGpuHour);
    spec.checkpoint_interval_s = read_interval(r);
    spec.checkpoint_write_GBps_per_node
        = r.get_number("checkpoint_write_GBps_per_node", 1e-6, kMaxGBps, kLlama3StorageGBpsPerNode);
    spec.checkpoint_read_GBps_per_node
        = r.get_number("checkpoint_read_GBps_per_node", 1e-6, kMaxGBps, kLlama3StorageGBpsPerNode);
    spec.restart_overhead_s = r.get_number("restart_overhead_s", 0, kMaxSeconds, 0.0);
    spec.replacement_delay_s = r.get_number("replacement_delay_s", 0, kMaxSeconds, 0.0);
    const std::string recovery
        = r.get_choice("recovery", { "checkpoint", "replica_memory", "replan" }, std::string("checkpoint"));
    spec.recovery = recovery == "replica_memory" ? RecoveryStrategy::replica_memory
        : recovery == "replan"                   ? RecoveryStrategy::replan
                                                 : RecoveryStrategy::checkpoint;
    r.raw("source");
    r.raw("notes");
    r.finish();
    return spec;
}

json reliability_to_json(const ReliabilitySpec& r)
{
    json j;
    j["failure_rate_per_gpu_hour"] = r.failure_rate_per_gpu_hour;
    j["checkpoint_interval_s"] = r.checkpoint_interval_s ? json(*r.checkpoint_interval_s) : json("auto");
    j["checkpoint_write_GBps_per_node"] = r.checkpoint_write_GBps_per_node;
    j["checkpoint_read_GBps_per_node"] = r.checkpoint_read_GBps_per_node;
    j["restart_overhead_s"] = r.restart_overhead_s;
    j["replacement_delay_s"] = r.replacement_delay_s;
    j["recovery"] = to_string(r.recovery);
    return j;
}

void check_reliability_plan(const Scenario& s, const std::string& file)
{
    if (!s.reliability || s.reliability->recovery != RecoveryStrategy::replica_memory)
        return;
    const int copies = data_parallel_copies(s);
    if (copies < 2)
        throw InputError(file, "reliability.recovery",
            "replica_memory reloads a lost node from a surviving data-parallel replica: it needs every stage "
            "held by at least 2 replicas (data-parallel degree "
                + std::to_string(copies) + ")");
}

} // namespace parallax
