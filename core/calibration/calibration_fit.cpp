#include "calibration/calibration_fit.hpp"

#include "model/analytic_model.hpp"

#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>

#include <cmath>
#include <set>

namespace parallax {

namespace {

enum class ScaleKind { gemm, attention, framework };

struct Parameter {
    ScaleKind kind;
    int index;
    std::string name;
};

Calibration apply(const std::vector<Parameter>& params, const Eigen::VectorXd& x, const std::string& name)
{
    Calibration c;
    c.name = name;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const double scale = std::exp(x[static_cast<Eigen::Index>(i)]);
        switch (params[i].kind) {
        case ScaleKind::gemm:
            c.gemm_scale[params[i].index] = scale;
            break;
        case ScaleKind::attention:
            c.attention_scale[params[i].index] = scale;
            break;
        case ScaleKind::framework:
            c.framework_scale[params[i].index] = scale;
            break;
        }
    }
    return c;
}

// Predicted tokens/s per GPU of one case under a calibration (recompute resolved as in validation).
double predict_case(const ValidationCase& c, const Strategy& s, const Calibration& cal)
{
    const PlanContext ctx(c.scenario.model, c.scenario.training, c.scenario.cluster, cal);
    AnalyticResult r;
    AnalyticModel(ctx).evaluate(s, r);
    return r.tokens_per_s / static_cast<double>(s.total_gpus());
}

struct Residuals {
    typedef double Scalar;
    enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
    typedef Eigen::VectorXd InputType;
    typedef Eigen::VectorXd ValueType;
    typedef Eigen::MatrixXd JacobianType;

    const std::vector<ValidationCase>* cases;
    const std::vector<Strategy>* strategies;
    const std::vector<Parameter>* params;
    double prior_weight;

    int inputs() const { return static_cast<int>(params->size()); }
    int values() const { return static_cast<int>(cases->size() + params->size()); }
    int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& f) const
    {
        const Calibration cal = apply(*params, x, "fit");
        for (std::size_t i = 0; i < cases->size(); ++i) {
            const double pred = predict_case((*cases)[i], (*strategies)[i], cal);
            f[static_cast<Eigen::Index>(i)] = std::log(pred / (*cases)[i].measured_tokens_per_s_per_gpu);
        }
        for (std::size_t j = 0; j < params->size(); ++j)
            f[static_cast<Eigen::Index>(cases->size() + j)] = prior_weight * x[static_cast<Eigen::Index>(j)];
        return 0;
    }
};

// The recompute each case runs with (unstated ones resolved once, with the uncalibrated model: memory
// does not depend on the calibration).
std::vector<Strategy> resolved_strategies(const std::vector<ValidationCase>& cases)
{
    const ValidationReport rep = run_validation(cases, {}, no_calibration());
    std::vector<Strategy> out;
    for (const auto& row : rep.rows)
        out.push_back(row.c.scenario.strategy);
    return out;
}

double rms(const Eigen::VectorXd& f, std::size_t n)
{
    double s = 0;
    for (std::size_t i = 0; i < n; ++i)
        s += f[static_cast<Eigen::Index>(i)] * f[static_cast<Eigen::Index>(i)];
    return n ? std::sqrt(s / static_cast<double>(n)) : 0;
}

} // namespace

FitResult fit_calibration(const std::vector<ValidationCase>& cases, const FitOptions& options)
{
    FitResult out;
    out.rows = static_cast<int>(cases.size());
    // Free parameters: a GEMM and an attention scale per GPU generation and a scale per non-reference
    // framework, each only where enough rows carry evidence for it. Megatron is the reference stack
    // (its scale would be confounded with the generation's GEMM scale).
    std::map<int, int> arch_rows, fw_rows;
    for (const auto& c : cases) {
        ++arch_rows[static_cast<int>(c.scenario.cluster.gpu.architecture)];
        ++fw_rows[static_cast<int>(c.scenario.training.framework)];
    }
    std::vector<Parameter> params;
    for (const auto& [arch, n] : arch_rows) {
        if (n < options.min_rows_per_parameter)
            continue;
        const std::string a(to_string(static_cast<GpuArchitecture>(arch)));
        params.push_back({ ScaleKind::gemm, arch, "gemm_scale." + a });
        params.push_back({ ScaleKind::attention, arch, "attention_scale." + a });
    }
    for (const auto& [fw, n] : fw_rows) {
        if (fw == static_cast<int>(Framework::megatron) || n < options.min_rows_per_parameter)
            continue;
        params.push_back(
            { ScaleKind::framework, fw, "framework_scale." + std::string(to_string(static_cast<Framework>(fw))) });
    }
    for (const auto& p : params)
        out.parameters.push_back(p.name);
    const std::vector<Strategy> strategies = resolved_strategies(cases);
    Residuals functor { &cases, &strategies, &params, options.prior_weight };
    Eigen::VectorXd x = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(params.size()));
    Eigen::VectorXd f(functor.values());
    functor(x, f);
    out.rms_log_error_before = rms(f, cases.size());
    if (!params.empty() && !cases.empty()) {
        Eigen::NumericalDiff<Residuals> numeric(functor);
        Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Residuals>, double> lm(numeric);
        lm.parameters.maxfev = 400;
        lm.minimize(x);
    }
    functor(x, f);
    out.rms_log_error_after = rms(f, cases.size());
    out.calibration = apply(params, x, options.name);
    out.calibration.source = "fitted to " + std::to_string(cases.size()) + " runs; RMS log error "
        + std::to_string(out.rms_log_error_before).substr(0, 5) + " -> "
        + std::to_string(out.rms_log_error_after).substr(0, 5);
    return out;
}

CrossValidation leave_one_source_out(const std::vector<ValidationCase>& cases, const FitOptions& options)
{
    CrossValidation cv;
    std::set<std::string> sources;
    for (const auto& c : cases)
        sources.insert(c.source_group);
    std::vector<const ValidationRow*> all;
    for (const auto& held_out : sources) {
        std::vector<ValidationCase> train, test;
        for (const auto& c : cases)
            (c.source_group == held_out ? test : train).push_back(c);
        const FitResult fit = fit_calibration(train, options);
        const ValidationReport rep = run_validation(test, {}, fit.calibration);
        for (const auto& row : rep.rows)
            cv.rows.push_back(row);
    }
    std::map<std::string, std::vector<double>> errors;
    std::vector<double> all_errors;
    for (const auto& row : cv.rows) {
        errors[row.c.source_group].push_back(row.error);
        all_errors.push_back(row.error);
    }
    auto summarize = [](const std::vector<double>& e) {
        GroupSummary g;
        g.rows = static_cast<int>(e.size());
        if (e.empty())
            return g;
        std::vector<double> a;
        for (double v : e)
            a.push_back(std::fabs(v));
        std::sort(a.begin(), a.end());
        double sum = 0;
        for (double v : a)
            sum += v;
        g.mape = sum / static_cast<double>(a.size());
        g.median = a.size() % 2 ? a[a.size() / 2] : 0.5 * (a[a.size() / 2 - 1] + a[a.size() / 2]);
        g.worst = a.back();
        return g;
    };
    for (const auto& [k, e] : errors)
        cv.by_held_out_source[k] = summarize(e);
    cv.overall = summarize(all_errors);
    return cv;
}

} // namespace parallax
