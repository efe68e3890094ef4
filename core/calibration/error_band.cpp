#include "calibration/error_band.hpp"

#include "io/preset_catalog.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numbers>
#include <set>

namespace parallax {

namespace {

// A class needs this many residuals from at least two sources before its own spread is trusted;
// below that the band falls back to a broader class. Eight keeps the t-quantile's small-sample
// penalty under ~10% (t(0.9, 7) = 1.41 vs z = 1.28).
constexpr int kMinPoolRows = 8;
constexpr int kMinPoolSources = 2;
// Far from every validation row (no row of its class, or beyond twice the largest validated GPU
// count), the band's half-width grows by this factor: the held-out MoE and long-context runs
// spread about twice as widely (log-error sd ~0.2) as the leave-one-source-out dense rows (~0.1);
// the broader class the band falls back to already carries part of that.
constexpr double kFarWidening = 1.5;
constexpr double kFarGpuMultiple = 2.0;
constexpr const char* kBuiltinPath = "calibration/error-bands.json";

struct Pool {
    const char* name; // how the band names the class it used
    std::function<bool(const WorkloadClass&, const WorkloadClass&)> matches;
};

// From the most specific class to all rows.
const std::array<Pool, 6>& pools()
{
    static const std::array<Pool, 6> p { {
        { "this class", [](const WorkloadClass& a, const WorkloadClass& b) { return a == b; } },
        { "same family, precision and GPU generation",
            [](const WorkloadClass& a, const WorkloadClass& b) {
                return a.moe == b.moe && a.fp8 == b.fp8 && a.architecture == b.architecture;
            } },
        { "same family and GPU generation",
            [](const WorkloadClass& a, const WorkloadClass& b) {
                return a.moe == b.moe && a.architecture == b.architecture;
            } },
        { "same family and precision",
            [](const WorkloadClass& a, const WorkloadClass& b) { return a.moe == b.moe && a.fp8 == b.fp8; } },
        { "same family", [](const WorkloadClass& a, const WorkloadClass& b) { return a.moe == b.moe; } },
        { "all validation runs", [](const WorkloadClass&, const WorkloadClass&) { return true; } },
    } };
    return p;
}

struct LogStats {
    int rows = 0;
    int sources = 0;
    double mean = 0;
    double sd = 0;
};

LogStats stats_of(const std::vector<const BandResidual*>& rows)
{
    LogStats s;
    s.rows = static_cast<int>(rows.size());
    std::set<std::string> sources;
    for (const BandResidual* r : rows) {
        s.mean += r->log_error;
        sources.insert(r->source);
    }
    s.sources = static_cast<int>(sources.size());
    if (s.rows == 0)
        return s;
    s.mean /= s.rows;
    double ss = 0;
    for (const BandResidual* r : rows)
        ss += (r->log_error - s.mean) * (r->log_error - s.mean);
    s.sd = s.rows > 1 ? std::sqrt(ss / (s.rows - 1)) : 0;
    return s;
}

std::vector<const BandResidual*> select(const std::vector<BandResidual>& residuals, const Pool& pool,
    const WorkloadClass& w, const std::string& exclude_source)
{
    std::vector<const BandResidual*> out;
    for (const BandResidual& r : residuals)
        if (r.source != exclude_source && pool.matches(r.workload, w))
            out.push_back(&r);
    return out;
}

std::string architecture_label(GpuArchitecture a)
{
    switch (a) {
    case GpuArchitecture::ampere:
        return "Ampere";
    case GpuArchitecture::hopper:
        return "Hopper";
    case GpuArchitecture::blackwell:
        return "Blackwell";
    case GpuArchitecture::volta:
        return "Volta";
    case GpuArchitecture::cdna2:
        return "CDNA2";
    case GpuArchitecture::cdna3:
        return "CDNA3";
    case GpuArchitecture::generic:
        break;
    }
    return "other GPU";
}

double student_t_log_norm(int dof)
{
    const double v = dof;
    return std::lgamma((v + 1) / 2) - std::lgamma(v / 2) - 0.5 * std::log(v * std::numbers::pi);
}

double student_t_density(double t, int dof, double log_norm)
{
    const double v = dof;
    return std::exp(log_norm - (v + 1) / 2 * std::log1p(t * t / v));
}

// P(a < T < b) by Simpson's rule (b - a is small near convergence; 64 panels are plenty).
double student_t_mass(double a, double b, int dof, double log_norm)
{
    constexpr int kSteps = 64;
    const double h = (b - a) / kSteps;
    double sum = student_t_density(a, dof, log_norm) + student_t_density(b, dof, log_norm);
    for (int i = 1; i < kSteps; ++i)
        sum += student_t_density(a + i * h, dof, log_norm) * (i % 2 ? 4 : 2);
    return sum * h / 3;
}

} // namespace

double student_t_quantile(double p, int dof)
{
    if (!(p > 0.5 && p < 1) || dof < 1)
        return std::numeric_limits<double>::infinity();
    // Newton's method on the CDF from 0: the CDF is concave for t > 0, so the iterates rise
    // monotonically to the root without overshooting; the mass is accumulated step by step.
    const double log_norm = student_t_log_norm(dof);
    double t = 0;
    double cdf = 0.5;
    for (int i = 0; i < 200 && p - cdf > 1e-12; ++i) {
        const double next = t + (p - cdf) / student_t_density(t, dof, log_norm);
        cdf += student_t_mass(t, next, dof, log_norm);
        t = next;
    }
    return t;
}

WorkloadClass workload_class(const ModelSpec& m, const TrainingSpec& t, const ClusterSpec& c)
{
    WorkloadClass k;
    k.moe = m.is_moe();
    k.fp8 = t.precision == Precision::fp8 || t.precision == Precision::fp4;
    k.long_context = t.seq_len >= kLongContextTokens;
    k.architecture = c.gpu.architecture;
    return k;
}

std::string workload_class_name(const WorkloadClass& k)
{
    return std::string(k.moe ? "MoE" : "dense") + (k.fp8 ? " fp8" : " 16-bit")
        + (k.long_context ? " long-context " : " ") + architecture_label(k.architecture);
}

namespace {

// The band from the most specific pool of `residuals` that holds enough rows.
ErrorBand band_from(const std::vector<BandResidual>& residuals, double level, const WorkloadClass& workload,
    long long gpus, const std::string& exclude_source)
{
    ErrorBand band;
    const auto& all_pools = pools();
    const std::vector<const BandResidual*> own = select(residuals, all_pools[0], workload, exclude_source);
    for (const Pool& pool : all_pools) {
        const std::vector<const BandResidual*> rows = select(residuals, pool, workload, exclude_source);
        const LogStats s = stats_of(rows);
        const bool last = &pool == &all_pools.back();
        if ((s.rows < kMinPoolRows || s.sources < kMinPoolSources) && !(last && s.rows >= 2))
            continue;
        long long largest_gpus = 0;
        for (const BandResidual* r : rows)
            largest_gpus = std::max(largest_gpus, r->gpus);
        band.far_from_validation = own.empty() || static_cast<double>(gpus) > kFarGpuMultiple * largest_gpus;
        // A prediction interval for one new run, not a confidence interval for the mean.
        double half = student_t_quantile((1 + level) / 2, s.rows - 1) * s.sd * std::sqrt(1 + 1.0 / s.rows);
        if (band.far_from_validation)
            half *= kFarWidening;
        band.level = level;
        band.low_factor = std::exp(std::min(0.0, s.mean - half));
        band.high_factor = std::exp(std::max(0.0, s.mean + half));
        band.rows = s.rows;
        band.sources = s.sources;
        for (const BandResidual* r : own.empty() ? rows : own)
            band.best_measured_mfu = std::max(band.best_measured_mfu, r->measured_mfu);
        band.basis = workload_class_name(workload) + ": " + std::to_string(s.rows) + " published runs from "
            + std::to_string(s.sources) + " sources (" + pool.name + ")";
        if (own.empty())
            band.basis += "; no validation run of this class, band widened";
        else if (static_cast<double>(gpus) > kFarGpuMultiple * largest_gpus)
            band.basis
                += "; far beyond the largest validated run (" + std::to_string(largest_gpus) + " GPUs), band widened";
        return band;
    }
    return band;
}

} // namespace

ErrorBand error_band(
    const ErrorBandTable& table, const WorkloadClass& workload, long long gpus, const std::string& exclude_source)
{
    return band_from(table.residuals, table.level, workload, gpus, exclude_source);
}

ErrorBand memory_error_band(
    const ErrorBandTable& table, const WorkloadClass& workload, long long gpus, const std::string& exclude_source)
{
    ErrorBand band = band_from(table.memory_residuals, table.level, workload, gpus, exclude_source);
    if (band.valid())
        band.basis = "memory of " + band.basis;
    return band;
}

void add_memory_interval(PredictionInterval& interval, const ErrorBand& memory_band, double peak_memory_bytes)
{
    if (!memory_band.valid() || !(peak_memory_bytes > 0))
        return;
    interval.memory_level = memory_band.level;
    interval.peak_memory_bytes_low = peak_memory_bytes * memory_band.low_factor;
    interval.peak_memory_bytes_high = peak_memory_bytes * memory_band.high_factor;
    interval.memory_basis = memory_band.basis;
}

PredictionInterval prediction_interval(const ErrorBand& band, double tokens_per_s, double step_time_s, double mfu)
{
    PredictionInterval i;
    if (!band.valid() || !(tokens_per_s > 0) || !(step_time_s > 0))
        return i;
    double low_factor = band.low_factor;
    i.far_from_validation = band.far_from_validation;
    i.basis = band.basis;
    if (band.best_measured_mfu > 0 && mfu > band.best_measured_mfu) {
        const double at_best = band.best_measured_mfu / mfu;
        if (at_best < low_factor) {
            // Not `far_from_validation`: the class and scale are validated, only this efficiency is not.
            low_factor = at_best;
            i.best_measured_mfu_exceeded = band.best_measured_mfu;
            char buf[200];
            std::snprintf(buf, sizeof buf,
                "; predicted MFU %.1f%% is above the best measured in this class (%.1f%%): the band reaches down to "
                "that efficiency",
                100 * mfu, 100 * band.best_measured_mfu);
            i.basis += buf;
        }
    }
    i.level = band.level;
    i.tokens_per_s_low = tokens_per_s * low_factor;
    i.tokens_per_s_high = tokens_per_s * band.high_factor;
    // The step takes longer exactly where the throughput is lower (same tokens per step).
    i.step_time_s_low = step_time_s / band.high_factor;
    i.step_time_s_high = step_time_s / low_factor;
    return i;
}

bool intervals_overlap(const PredictionInterval& a, const PredictionInterval& b)
{
    if (a.level <= 0 || b.level <= 0)
        return false;
    return a.tokens_per_s_low <= b.tokens_per_s_high && b.tokens_per_s_low <= a.tokens_per_s_high;
}

const ErrorBandTable& builtin_error_bands()
{
    static const ErrorBandTable table = [] {
        const auto file = builtin_preset_file(kBuiltinPath);
        return file ? error_band_table_from_json(file->json, file->origin) : ErrorBandTable {};
    }();
    return table;
}

namespace {

void count_coverage(BandCoverage& c, const BandResidual& r, const ErrorBand& b)
{
    if (!b.valid())
        return;
    ++c.rows;
    c.covered += std::log(b.low_factor) <= r.log_error && r.log_error <= std::log(b.high_factor);
    c.mean_width += b.high_factor / b.low_factor - 1;
}

} // namespace

BandCoverage memory_band_coverage(const ErrorBandTable& table)
{
    // The published peak-memory figures come from few sources (one today): each run is left out on
    // its own, so the check says how the band covers a new run, not a new source.
    BandCoverage c;
    c.group = "memory";
    for (std::size_t i = 0; i < table.memory_residuals.size(); ++i) {
        std::vector<BandResidual> others = table.memory_residuals;
        others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
        const BandResidual& r = table.memory_residuals[i];
        count_coverage(c, r, band_from(others, table.level, r.workload, r.gpus, {}));
    }
    if (c.rows > 0)
        c.mean_width /= c.rows;
    return c;
}

std::vector<BandCoverage> band_coverage(const ErrorBandTable& table)
{
    // The groups the accuracy tables report: the four workload classes and each GPU generation.
    const std::vector<std::pair<std::string, std::function<bool(const WorkloadClass&)>>> groups = {
        { "all", [](const WorkloadClass&) { return true; } },
        { "dense 16-bit", [](const WorkloadClass& k) { return !k.moe && !k.fp8; } },
        { "dense fp8", [](const WorkloadClass& k) { return !k.moe && k.fp8; } },
        { "MoE", [](const WorkloadClass& k) { return k.moe; } },
        { "long context", [](const WorkloadClass& k) { return k.long_context; } },
        { "Ampere", [](const WorkloadClass& k) { return k.architecture == GpuArchitecture::ampere; } },
        { "Hopper", [](const WorkloadClass& k) { return k.architecture == GpuArchitecture::hopper; } },
        { "Blackwell", [](const WorkloadClass& k) { return k.architecture == GpuArchitecture::blackwell; } },
    };
    std::vector<BandCoverage> out;
    for (const auto& [name, in_group] : groups) {
        BandCoverage c;
        c.group = name;
        for (const BandResidual& r : table.residuals) {
            if (!in_group(r.workload))
                continue;
            count_coverage(c, r, error_band(table, r.workload, r.gpus, r.source));
        }
        if (c.rows > 0) {
            c.mean_width /= c.rows;
            out.push_back(c);
        }
    }
    return out;
}

namespace {

nlohmann::json residuals_json(const std::vector<BandResidual>& residuals)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const BandResidual& r : residuals)
        rows.push_back({ { "id", r.id }, { "source", r.source }, { "moe", r.workload.moe }, { "fp8", r.workload.fp8 },
            { "long_context", r.workload.long_context },
            { "architecture", std::string(to_string(r.workload.architecture)) }, { "gpus", r.gpus },
            { "log_error", r.log_error } });
    for (std::size_t k = 0; k < residuals.size(); ++k) {
        if (residuals[k].measured_mfu > 0)
            rows[k]["measured_mfu"] = residuals[k].measured_mfu;
        if (const RunPlan& pl = residuals[k].plan; pl.known())
            rows[k]["plan"] = { { "model", pl.model }, { "gpu", pl.gpu }, { "params", pl.params },
                { "seq_len", pl.seq_len }, { "tp", pl.tp }, { "pp", pl.pp }, { "cp", pl.cp }, { "ep", pl.ep },
                { "vpp", pl.vpp }, { "dp", pl.dp }, { "label", pl.label } };
    }
    return rows;
}

// A residual's plan: optional (tables written before plans were kept have none).
RunPlan plan_from_json(const nlohmann::json& r, const std::string& file, const std::string& at)
{
    RunPlan pl;
    if (!r.contains("plan"))
        return pl;
    const nlohmann::json& j = r.at("plan");
    pl.model = j.at("model").get<std::string>();
    pl.gpu = j.at("gpu").get<std::string>();
    pl.params = j.at("params").get<double>();
    pl.seq_len = j.at("seq_len").get<long long>();
    pl.tp = j.at("tp").get<int>();
    pl.pp = j.at("pp").get<int>();
    pl.cp = j.at("cp").get<int>();
    pl.ep = j.at("ep").get<int>();
    pl.vpp = j.at("vpp").get<int>();
    pl.dp = j.at("dp").get<long long>();
    pl.label = j.value("label", std::string());
    if (!(pl.params > 0) || pl.seq_len < 1 || pl.tp < 1 || pl.pp < 1 || pl.cp < 1 || pl.ep < 1 || pl.vpp < 1
        || pl.dp < 1)
        throw InputError(file, at + ".plan", "parameters, sequence length and every degree must be positive");
    return pl;
}

std::vector<BandResidual> residuals_from_json(
    const nlohmann::json& array, const std::string& file, const std::string& key)
{
    std::vector<BandResidual> out;
    int i = 0;
    for (const auto& r : array) {
        const std::string at = key + "[" + std::to_string(i++) + "]";
        try {
            BandResidual b;
            b.id = r.at("id").get<std::string>();
            b.source = r.at("source").get<std::string>();
            b.workload.moe = r.at("moe").get<bool>();
            b.workload.fp8 = r.at("fp8").get<bool>();
            b.workload.long_context = r.at("long_context").get<bool>();
            if (!architecture_from_string(r.at("architecture").get<std::string>(), b.workload.architecture))
                throw InputError(file, at + ".architecture", "not a GPU architecture Parallax knows");
            b.gpus = r.at("gpus").get<long long>();
            b.log_error = r.at("log_error").get<double>();
            if (!std::isfinite(b.log_error))
                throw InputError(file, at + ".log_error", "must be a finite number");
            b.measured_mfu = r.value("measured_mfu", 0.0);
            if (!std::isfinite(b.measured_mfu) || b.measured_mfu < 0 || b.measured_mfu > 1)
                throw InputError(file, at + ".measured_mfu", "must be a fraction between 0 and 1");
            b.plan = plan_from_json(r, file, at);
            out.push_back(std::move(b));
        } catch (const nlohmann::json::exception& e) {
            throw InputError(file, at,
                std::string("a residual needs id, source, moe, fp8, long_context, "
                            "architecture, gpus and log_error: ")
                    + e.what());
        }
    }
    return out;
}

} // namespace

nlohmann::json error_band_table_to_json(const ErrorBandTable& t)
{
    return { { "schema", 1 }, { "level", t.level }, { "provenance", t.provenance },
        { "residuals", residuals_json(t.residuals) }, { "memory_residuals", residuals_json(t.memory_residuals) } };
}

ErrorBandTable error_band_table_from_json(const nlohmann::json& j, const std::string& file)
{
    if (!j.is_object() || !j.contains("residuals") || !j["residuals"].is_array())
        throw InputError(file, "residuals", "an error-band table holds a \"residuals\" array");
    ErrorBandTable t;
    t.level = j.value("level", 0.8);
    if (!(t.level > 0 && t.level < 1))
        throw InputError(file, "level", "must be a probability between 0 and 1");
    t.provenance = j.value("provenance", std::string());
    t.residuals = residuals_from_json(j["residuals"], file, "residuals");
    if (j.contains("memory_residuals")) {
        if (!j["memory_residuals"].is_array())
            throw InputError(file, "memory_residuals", "must be an array of residuals");
        t.memory_residuals = residuals_from_json(j["memory_residuals"], file, "memory_residuals");
    }
    return t;
}

} // namespace parallax
