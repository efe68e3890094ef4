#include "calibration/serving_error_band.hpp"

#include "io/preset_catalog.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <mutex>

namespace parallax {

namespace {

// A class's own rows are trusted once there are this many of them from at least two models; below that the
// band falls back to a broader class. With 30 rows the 10th and 90th percentiles each rest on three rows.
constexpr int kMinPoolRows = 30;
constexpr int kMinPoolModels = 2;
constexpr const char* kBuiltinPath = "calibration/serving-error-bands.json";

struct Pool {
    const char* name;
    std::function<bool(const ServingBandClass&, const ServingBandClass&)> matches;
};

// From the most specific class to all rows.
const std::array<Pool, 4>& pools()
{
    static const std::array<Pool, 4> p { {
        { "the rows of its engine, family and mode",
            [](const ServingBandClass& a, const ServingBandClass& b) { return a == b; } },
        { "the rows of its engine and mode",
            [](const ServingBandClass& a, const ServingBandClass& b) {
                return a.engine == b.engine && a.mode == b.mode;
            } },
        { "the rows of its mode",
            [](const ServingBandClass& a, const ServingBandClass& b) { return a.mode == b.mode; } },
        { "all measured rows", [](const ServingBandClass&, const ServingBandClass&) { return true; } },
    } };
    return p;
}

// The q-quantile of sorted values, interpolated between the nearest ranks.
double quantile(const std::vector<double>& sorted, double q)
{
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

const char* metric_name(ServingMetric m)
{
    switch (m) {
    case ServingMetric::ttft:
        return "ttft";
    case ServingMetric::tpot:
        return "tpot";
    case ServingMetric::throughput:
        return "throughput";
    }
    return "";
}

double number_or_nan(const nlohmann::json& row, const char* key)
{
    const auto it = row.find(key);
    return it != row.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

} // namespace

double ServingBandResidual::log_error(ServingMetric m) const
{
    switch (m) {
    case ServingMetric::ttft:
        return log_ttft;
    case ServingMetric::tpot:
        return log_tpot;
    case ServingMetric::throughput:
        return log_throughput;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

std::string serving_band_class_name(const ServingBandClass& k)
{
    return std::string(to_string(k.engine)) + (k.moe ? " MoE " : " dense ") + k.mode;
}

ServingBandClass serving_band_class(const ServingScenario& s)
{
    ServingBandClass k;
    k.engine = s.serving.engine;
    k.moe = s.model.is_moe();
    if (s.deployment.disaggregated)
        k.mode = "disaggregated";
    else if (s.serving.workload.load == LoadKind::batch_size)
        k.mode = "static batch";
    else if (s.serving.workload.load == LoadKind::max_throughput)
        k.mode = "offline";
    return k;
}

ServingBand serving_error_band(const ServingBandTable& table, const ServingBandClass& klass, ServingMetric metric,
    const std::string& exclude_model)
{
    for (const Pool& pool : pools()) {
        std::vector<double> errors;
        std::map<std::string, int> models;
        for (const ServingBandResidual& r : table.residuals) {
            const double e = r.log_error(metric);
            if (std::isnan(e) || r.model == exclude_model || !pool.matches(klass, r.klass))
                continue;
            errors.push_back(e);
            ++models[r.model];
        }
        const bool last = &pool == &pools().back();
        if (errors.empty() || (!last && (errors.size() < kMinPoolRows || models.size() < kMinPoolModels)))
            continue;
        std::sort(errors.begin(), errors.end());
        const double tail = 0.5 * (1.0 - table.quantile_level);
        ServingBand b;
        b.level = table.level;
        b.rows = static_cast<int>(errors.size());
        b.low_factor = std::min(1.0, std::exp(quantile(errors, tail)));
        b.high_factor = std::max(1.0, std::exp(quantile(errors, 1.0 - tail)));
        b.basis = std::to_string(b.rows) + " measured rows of " + std::to_string(models.size()) + " models ("
            + pool.name + "; the deployment: " + serving_band_class_name(klass) + ")";
        return b;
    }
    return {};
}

std::vector<BandCoverage> serving_band_coverage(const ServingBandTable& table)
{
    std::vector<BandCoverage> out;
    for (ServingMetric m : { ServingMetric::ttft, ServingMetric::tpot, ServingMetric::throughput }) {
        BandCoverage c;
        c.group = metric_name(m);
        double width = 0;
        for (const ServingBandResidual& r : table.residuals) {
            const double e = r.log_error(m);
            if (std::isnan(e))
                continue;
            const ServingBand b = serving_error_band(table, r.klass, m, r.model);
            if (!b.valid())
                continue;
            ++c.rows;
            const double ratio = std::exp(e);
            c.covered += ratio >= b.low_factor && ratio <= b.high_factor ? 1 : 0;
            width += b.high_factor / b.low_factor - 1.0;
        }
        c.mean_width = c.rows > 0 ? width / c.rows : 0;
        out.push_back(c);
    }
    return out;
}

nlohmann::json serving_band_table_to_json(const ServingBandTable& t)
{
    nlohmann::json rows = nlohmann::json::array();
    // Four decimals of a log error are 0.01% of the value: far below any band's width, and the file stays small.
    const auto rounded = [](double v) -> nlohmann::json {
        if (std::isnan(v))
            return nullptr;
        return std::round(v * 1e4) / 1e4;
    };
    for (const ServingBandResidual& r : t.residuals)
        rows.push_back({ { "model", r.model }, { "engine", to_string(r.klass.engine) }, { "moe", r.klass.moe },
            { "mode", r.klass.mode }, { "ttft", rounded(r.log_ttft) }, { "tpot", rounded(r.log_tpot) },
            { "throughput", rounded(r.log_throughput) } });
    return { { "level", t.level }, { "quantile_level", t.quantile_level }, { "provenance", t.provenance },
        { "residuals_are", "ln(measured / predicted) per row; null where the row does not measure it" },
        { "residuals", rows } };
}

ServingBandTable serving_band_table_from_json(const nlohmann::json& j, const std::string& file)
{
    if (!j.is_object() || !j.contains("residuals") || !j.at("residuals").is_array())
        throw InputError(file, "residuals", "a serving error-band table is an object with a \"residuals\" array");
    ServingBandTable t;
    t.level = j.value("level", 0.8);
    if (!(t.level > 0 && t.level < 1))
        throw InputError(file, "level", "must be between 0 and 1");
    t.quantile_level = j.value("quantile_level", t.level);
    if (!(t.quantile_level >= t.level && t.quantile_level < 1))
        throw InputError(file, "quantile_level", "must be at least the level and below 1");
    t.provenance = j.value("provenance", std::string());
    for (const nlohmann::json& row : j.at("residuals")) {
        ServingBandResidual r;
        r.model = row.value("model", std::string());
        const auto engine = serving_engine_from_string(row.value("engine", std::string()));
        if (!engine)
            throw InputError(file, "residuals[].engine", "must be vllm, sglang or trtllm");
        r.klass.engine = *engine;
        r.klass.moe = row.value("moe", false);
        r.klass.mode = row.value("mode", std::string("aggregated"));
        r.log_ttft = number_or_nan(row, "ttft");
        r.log_tpot = number_or_nan(row, "tpot");
        r.log_throughput = number_or_nan(row, "throughput");
        t.residuals.push_back(std::move(r));
    }
    return t;
}

const ServingBandTable& builtin_serving_error_bands()
{
    static const ServingBandTable table = [] {
        const auto file = builtin_preset_file(kBuiltinPath);
        return file ? serving_band_table_from_json(file->json, file->origin) : ServingBandTable {};
    }();
    return table;
}

const ServingBands& builtin_serving_bands(const ServingBandClass& klass)
{
    static std::mutex mutex;
    static std::map<std::string, ServingBands> cache;
    const std::string key = serving_band_class_name(klass);
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
        const ServingBandTable& t = builtin_serving_error_bands();
        ServingBands b { serving_error_band(t, klass, ServingMetric::ttft),
            serving_error_band(t, klass, ServingMetric::tpot),
            serving_error_band(t, klass, ServingMetric::throughput) };
        it = cache.emplace(key, std::move(b)).first;
    }
    return it->second;
}

} // namespace parallax
