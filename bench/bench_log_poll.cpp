// A long run's log as the run engine reads it: a 50,000-step Megatron log arriving in 100 polls. Each poll
// parses what arrived and stores the steps, as RunEngine::poll does:
//  - reparse: what the engine did before: the whole log so far parsed again and every step re-inserted
//    (quadratic in the log's length);
//  - incremental: the engine now: only the new bytes parsed (MeasurementCollector), only new or changed
//    steps written (StoredMeasurements).
// Its own executable: the run store needs a QCoreApplication (Qt loads the SQLite driver as a plugin).
#include "runs/measurement_sync.hpp"
#include "runs/measurements.hpp"
#include "store/run_store.hpp"

#include <QCoreApplication>
#include <QTemporaryDir>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <string>

namespace {

using namespace parallax::remote;

constexpr int kSteps = 50000;
constexpr int kPolls = 100;

const std::string& log_text()
{
    static const std::string log = [] {
        std::string out;
        for (int i = 1; i <= kSteps; ++i)
            out += " iteration " + std::to_string(i) + "/ 100000 | consumed samples: " + std::to_string(i * 4)
                + " | elapsed time per iteration (ms): " + std::to_string(1500 + i % 97)
                + ".3 | throughput per GPU (TFLOP/s/GPU): 401.2 | lm loss: 2.5E+00 | loss scale: 1.0 |\n";
        return out;
    }();
    return log;
}

struct Store {
    QTemporaryDir dir;
    RunStore store { dir.filePath(QStringLiteral("runs.sqlite")) };
    Store()
    {
        RunRecord r;
        r.id = "bench";
        r.framework = "megatron";
        r.launcher = "slurm";
        r.cluster = "bench";
        r.profile_json = "{}";
        r.scenario_json = "{}";
        r.plan_json = "{}";
        r.remote_dir = "/scratch";
        store.create(r);
    }
};

template <class Poll> void polls(benchmark::State& state, Poll&& poll)
{
    const std::string& log = log_text();
    const std::size_t increment = log.size() / kPolls + 1;
    for (auto _ : state) {
        state.PauseTiming();
        Store s;
        state.ResumeTiming();
        for (std::size_t end = increment; end < log.size() + increment; end += increment)
            poll(s.store, std::string_view(log).substr(0, std::min(end, log.size())), end - increment);
        benchmark::DoNotOptimize(s.store.steps("bench").size());
    }
    state.counters["steps"] = kSteps;
    state.counters["polls"] = kPolls;
}

void BM_LogPolls_Reparse(benchmark::State& state)
{
    polls(state, [](RunStore& store, std::string_view so_far, std::size_t) {
        const Measurements m = parse_measurements(so_far, LogFormat::megatron);
        store.set_measurements("bench", m.parsed, m.benches, m.summary_json().dump(), m.run_info_json);
    });
}
BENCHMARK(BM_LogPolls_Reparse)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_LogPolls_Incremental(benchmark::State& state)
{
    std::unique_ptr<MeasurementCollector> collector;
    std::unique_ptr<StoredMeasurements> stored;
    polls(state, [&](RunStore& store, std::string_view so_far, std::size_t from) {
        if (from == 0) { // a new run
            collector = std::make_unique<MeasurementCollector>(LogFormat::megatron);
            stored = std::make_unique<StoredMeasurements>();
        }
        collector->feed(so_far.substr(std::min(from, so_far.size())));
        store.store_measurements("bench", stored->delta_to(collector->snapshot()));
    });
}
BENCHMARK(BM_LogPolls_Incremental)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
