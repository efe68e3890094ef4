// Benchmarks of the analytic model (Google Benchmark). Targets: issue 3 (analytic predict < 50 us per
// strategy) and issue 4 (>= 5 million strategy evaluations per second per core).
#include "analytic_model.hpp"
#include "preset_catalog.hpp"
#include "scenario_io.hpp"

#include <benchmark/benchmark.h>

namespace {

using namespace parallax;

const Scenario& scenario(const char* name)
{
    static std::map<std::string, Scenario> cache;
    auto it = cache.find(name);
    if (it == cache.end())
        it = cache.emplace(name, load_scenario_preset(name, PresetCatalog::standard())).first;
    return it->second;
}

void BM_AnalyticEvaluate(benchmark::State& state, const char* name)
{
    const Scenario& s = scenario(name);
    const PlanContext ctx(s.model, s.training, s.cluster);
    const AnalyticModel model(ctx);
    AnalyticResult r;
    for (auto _ : state) {
        model.evaluate(s.strategy, r);
        benchmark::DoNotOptimize(r.step_time_s);
    }
    state.counters["evals_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_AnalyticPredict(benchmark::State& state, const char* name)
{
    const Scenario& s = scenario(name);
    const PlanContext ctx(s.model, s.training, s.cluster);
    const AnalyticModel model(ctx);
    for (auto _ : state) {
        Prediction p = model.predict(s.strategy);
        benchmark::DoNotOptimize(p.step_time_s);
    }
}

BENCHMARK_CAPTURE(BM_AnalyticEvaluate, default, "default")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AnalyticEvaluate, gpt3_175b_1024_a100, "gpt3-175b-1024-a100")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AnalyticEvaluate, llama31_405b_16k, "llama3.1-405b-16k-h100")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AnalyticPredict, default, "default")->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
