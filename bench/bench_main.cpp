// Speed benchmarks (Google Benchmark) for the targets the issues set:
//  - analytic predict < 50 us per strategy; >= 5 million evaluations per second per core
//  - a 64-stage x 1,024-micro-batch interleaved schedule simulated in < 1 s on one core
//  - full search (a) GPT-3 175B on 1,024 A100-80GB, global batch 1,536, seq 2,048 in < 0.5 s and
//    (b) Llama 3.1 405B on 16,384 H100, global batch 2,048, seq 8,192 in < 3 s, on 2 cores, incl. the
//    simulator refinement of the top 20, peak memory < 500 MiB
//  - a DeepSeek-V3-scale search (671B, 2,048 H800) in < 5 s on 2 cores
//  - a serving deployment search (Qwen3-235B-A22B on 64 H100, DeepSeek-V3 on 64 H200, Llama 4 Maverick on
//    64 B200; aggregated and disaggregated) in < 1 s
//  - a heterogeneous search over three GPU types on 64 nodes (Llama 3 70B on 22 DGX H100, 21 DGX A100 and
//    21 DGX-1 V100) in a few seconds on 2 cores
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"
#include "ir/lowering.hpp"
#include "model/analytic_model.hpp"
#include "model/strategy_costs.hpp"
#include "search/hetero_search.hpp"
#include "search/search.hpp"
#include "serving/serving_search.hpp"
#include "sim/simulator.hpp"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <map>

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

double peak_rss_MiB()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0; // Linux reports KiB
}

// One evaluation with a warm per-thread cache: what the search pays per strategy.
void BM_AnalyticEvaluate(benchmark::State& state, const char* name)
{
    const Scenario& s = scenario(name);
    const PlanContext ctx(s.model, s.training, s.cluster);
    const AnalyticModel model(ctx);
    EvaluationCache cache(ctx);
    AnalyticResult r;
    for (auto _ : state) {
        model.evaluate(s.strategy, r, cache);
        benchmark::DoNotOptimize(r.step_time_s);
    }
    state.counters["evals_per_s_per_thread"]
        = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// A full prediction from scratch (cold cache, per-stage reports, warnings): what `predict` pays.
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

void BM_SimulateLargeInterleaved(benchmark::State& state)
{
    ModelSpec m;
    m.name = "bench-128L";
    m.layers = 128;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.ffn_hidden = 28672;
    m.vocab = 128000;
    m.ffn_act = FfnActivation::swiglu;
    Scenario base = scenario("default");
    ClusterSpec c = base.cluster;
    c.nodes = 64;
    TrainingSpec t;
    t.seq_len = 4096;
    t.global_batch = 1024;
    const PlanContext ctx(m, t, c);
    Strategy s;
    s.tp = 8;
    s.pp = 64;
    s.vpp = 2;
    s.schedule = Schedule::interleaved;
    s.sequence_parallel = true;
    const LoweredPlan plan = lower_plan(ctx, s);
    for (auto _ : state) {
        SimulationResult r = simulate(plan.graph);
        benchmark::DoNotOptimize(r.makespan_s);
    }
    state.counters["ops"] = static_cast<double>(plan.graph.size());
    state.counters["graph_MiB"] = plan.graph.memory_bytes() / 1048576.0;
}

void BM_LowerLargeInterleaved(benchmark::State& state)
{
    ModelSpec m = scenario("llama3.1-405b-16k-h100").model;
    m.layers = 128;
    Scenario base = scenario("default");
    ClusterSpec c = base.cluster;
    c.nodes = 64;
    TrainingSpec t;
    t.seq_len = 4096;
    t.global_batch = 1024;
    const PlanContext ctx(m, t, c);
    Strategy s;
    s.tp = 8;
    s.pp = 64;
    s.vpp = 2;
    s.schedule = Schedule::interleaved;
    s.sequence_parallel = true;
    for (auto _ : state) {
        LoweredPlan plan = lower_plan(ctx, s);
        benchmark::DoNotOptimize(plan.graph.size());
    }
}

void run_search(benchmark::State& state, Scenario s)
{
    SearchOptions o;
    o.threads = 2;
    o.refine_top = 20;
    SearchOutcome out;
    for (auto _ : state) {
        out = search_strategies(s, o);
        benchmark::DoNotOptimize(out.evaluated);
    }
    state.counters["evaluated"] = static_cast<double>(out.evaluated);
    state.counters["feasible"] = static_cast<double>(out.feasible);
    state.counters["seconds"] = out.seconds;
    state.counters["strategies_per_s"] = out.evaluated / std::max(1e-9, out.seconds);
    // Per search thread: every valid strategy checked against memory, and costed (time, power) when it fits.
    state.counters["strategies_per_s_per_thread"] = out.evaluated / std::max(1e-9, out.seconds) / o.threads;
    state.counters["peak_RSS_MiB"] = peak_rss_MiB();
}

void BM_SearchGpt3_175B_1024A100(benchmark::State& state)
{
    Scenario s = scenario("gpt3-175b-1024-a100");
    s.training.global_batch = 1536;
    s.training.seq_len = 2048;
    run_search(state, s);
}

void BM_SearchLlama31_405B_16kH100(benchmark::State& state)
{
    Scenario s = scenario("llama3.1-405b-16k-h100");
    s.training.global_batch = 2048;
    s.training.seq_len = 8192;
    run_search(state, s);
}

void BM_SearchDeepSeekV3_2048H800(benchmark::State& state)
{
    run_search(state, scenario("deepseek-v3-2048-h800"));
}

// A serving search over 8 nodes of 8 `gpu`s joined by `nvlink` and NDR InfiniBand, starting from TP 8;
// `serving_json` is the scenario's serving section.
void run_serving_search(
    benchmark::State& state, const char* model, const char* gpu, const char* nvlink, const char* serving_json)
{
    const nlohmann::json j = { { "schema", 1 }, { "model", model },
        { "cluster",
            { { "gpu", gpu }, { "nodes", 8 }, { "gpus_per_node", 8 }, { "intra_node", nvlink },
                { "inter_node", "ib-ndr" } } },
        { "serving", nlohmann::json::parse(serving_json) }, { "deployment", { { "tp", 8 } } } };
    const ServingScenario s = parse_serving_scenario(j, "bench.json", PresetCatalog::standard());
    ServingSearchResult r;
    for (auto _ : state) {
        r = search_serving(s, 20);
        benchmark::DoNotOptimize(r.evaluated);
    }
    state.counters["evaluated"] = static_cast<double>(r.evaluated);
    state.counters["seconds"] = r.seconds;
}

void BM_ServingSearchQwen3_235B_64H100(benchmark::State& state)
{
    run_serving_search(state, "qwen3-235b-a22b", "H100-SXM5-80GB", "nvlink4-nvswitch", R"({
      "precision": { "weights": "fp8", "kv_cache": "fp8" },
      "workload": { "isl": 2048, "osl": 512, "concurrency": 512 }, "slo": { "tpot_ms": 60 } })");
}

// MLA, dense and MoE layers, SGLang, a Poisson load: the other branches of the serving model.
void BM_ServingSearchDeepSeekV3_64H200(benchmark::State& state)
{
    run_serving_search(state, "deepseek-v3", "H200-SXM-141GB", "nvlink4-nvswitch", R"({
      "engine": "sglang", "precision": { "weights": "fp8", "kv_cache": "bf16" },
      "workload": { "isl": 4096, "osl": 1024, "request_rate_qps": 20 }, "slo": { "ttft_ms": 2000 } })");
}

// Three kinds of layer (dense and MoE, chunked and global attention) and TensorRT-LLM's host work: the most
// layer kinds a preset has.
void BM_ServingSearchLlama4Maverick_64B200(benchmark::State& state)
{
    run_serving_search(state, "llama4-maverick", "B200", "nvlink5-nvswitch", R"({
      "engine": "trtllm", "precision": { "weights": "fp4", "kv_cache": "fp8" },
      "workload": { "isl": 1000, "osl": 1000, "concurrency": 512 }, "slo": { "ttft_ms": 2000, "tpot_ms": 50 } })");
}

// Three GPU types on 64 nodes, every group usable (fp16: the V100 has no bf16): the planner's size.
void BM_HeteroSearchLlama3_70B_64Nodes3Types(benchmark::State& state)
{
    const Scenario s = parse_scenario(nlohmann::json::parse(R"({
      "schema": 1, "model": "llama3-70b",
      "cluster": { "groups": [
          { "name": "h100", "gpu": "H100-SXM5-80GB", "nodes": 22, "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch" },
          { "name": "a100", "gpu": "A100-SXM4-80GB", "nodes": 21, "gpus_per_node": 8, "intra_node": "nvlink3-nvswitch" },
          { "name": "v100", "gpu": "V100-SXM2-32GB", "nodes": 21, "gpus_per_node": 8, "intra_node": "nvlink2" } ],
        "inter_node": "ib-ndr" },
      "training": { "global_batch": 1024, "seq_len": 4096, "precision": "fp16" } })"),
        "bench.json", PresetCatalog::standard(), ScenarioUse::search);
    HeteroSearchOptions o;
    o.threads = 2;
    HeteroSearchOutcome out;
    for (auto _ : state) {
        out = search_heterogeneous(s, o);
        benchmark::DoNotOptimize(out.evaluated);
    }
    state.counters["layouts"] = static_cast<double>(out.layouts);
    state.counters["evaluated"] = static_cast<double>(out.evaluated);
    state.counters["seconds"] = out.seconds;
    state.counters["best_tokens_per_s"]
        = out.results.empty() ? 0.0 : out.results.front().prediction.prediction.tokens_per_s;
}

BENCHMARK_CAPTURE(BM_AnalyticEvaluate, default, "default");
BENCHMARK_CAPTURE(BM_AnalyticEvaluate, gpt3_175b_1024_a100, "gpt3-175b-1024-a100");
BENCHMARK_CAPTURE(BM_AnalyticEvaluate, llama31_405b_16k, "llama3.1-405b-16k-h100");
BENCHMARK_CAPTURE(BM_AnalyticPredict, default, "default")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LowerLargeInterleaved)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_SimulateLargeInterleaved)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_SearchGpt3_175B_1024A100)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SearchLlama31_405B_16kH100)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ServingSearchQwen3_235B_64H100)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_ServingSearchDeepSeekV3_64H200)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_ServingSearchLlama4Maverick_64B200)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_SearchDeepSeekV3_2048H800)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_HeteroSearchLlama3_70B_64Nodes3Types)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace

BENCHMARK_MAIN();
