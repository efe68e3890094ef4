#include "model/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parallax {

namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kSecondsPerDay = 86400;
constexpr int kBisectionSteps = 200;
// The first step after a restart does not count as steady-state work: allocator growth, kernel
// autotuning and caches, communicator warm-up and the pipeline fill. One step is our assumption.
constexpr double kWarmupSteps = 1;

struct Rates {
    double failures_per_s = 0;
    double preemptions_per_s = 0;
    double total() const { return failures_per_s + preemptions_per_s; }
};

Rates interruption_rates(const ReliabilitySpec& spec, const GoodputPlan& plan)
{
    // A synchronous job stops when any of its GPUs fails or any of its nodes is preempted.
    return { spec.failure_rate_per_gpu_hour * plan.gpus / kSecondsPerHour, plan.preemptions_per_s };
}

double replicas_surviving_fraction(const GoodputPlan& plan)
{
    const double copies = plan.data_parallel_copies;
    return copies >= 2 ? (copies - 1) / copies : 0.0;
}

// replan: how much of the throughput the survivors keep until the replacement arrives.
double survivors_fraction(const GoodputPlan& plan)
{
    if (plan.data_parallel_copies < 2)
        return 0.0;
    if (plan.survivor_throughput_fraction >= 0)
        return std::clamp(plan.survivor_throughput_fraction, 0.0, 1.0);
    return replicas_surviving_fraction(plan);
}

// The failed node's share of one replica's state: a replica spans nodes / copies nodes.
double lost_node_state_bytes(const GoodputPlan& plan)
{
    return plan.nodes > 0 ? plan.checkpoint_bytes * plan.data_parallel_copies / plan.nodes : 0.0;
}

double checkpoint_transfer_s(double bytes, double GBps_per_node, double nodes)
{
    // Every node writes (reads) its shard in parallel: size / (bandwidth x nodes).
    const double Bps = GBps_per_node * 1e9 * nodes;
    return Bps > 0 ? bytes / Bps : 0.0;
}

std::string format(const char* fmt, double a, double b = 0)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, a, b);
    return buf;
}

} // namespace

TimeFractions expected_time_fractions(const CheckpointProcess& p)
{
    TimeFractions f;
    const double lambda = p.interruptions_per_s;
    const double tau = p.interval_s + p.write_s;
    if (tau <= 0)
        return f;
    // Per segment of T useful seconds: running time (e^(lambda tau) - 1) / lambda, of which tau is
    // the completed segment; e^(lambda tau) - 1 interruptions, each followed by the recovery.
    const double interruptions = lambda > 0 ? std::expm1(lambda * tau) : 0.0;
    const double running = lambda > 0 ? interruptions / lambda : tau;
    const RecoveryCost& r = p.recovery;
    const double segment = running + interruptions * r.total();
    f.useful = p.interval_s / segment;
    f.checkpoint_writes = p.write_s / segment;
    f.lost_work = (running - tau) / segment;
    f.restart = interruptions * r.restart_s / segment;
    f.replacement = interruptions * r.replacement_s / segment;
    f.reload = interruptions * r.reload_s / segment;
    f.warmup = interruptions * r.warmup_s / segment;
    return f;
}

double young_interval_s(double write_s, double interruptions_per_s)
{
    return interruptions_per_s > 0 ? std::sqrt(2 * write_s / interruptions_per_s) : 0.0;
}

double daly_interval_s(double write_s, double interruptions_per_s)
{
    if (interruptions_per_s <= 0)
        return 0.0;
    const double M = 1 / interruptions_per_s;
    if (write_s >= 2 * M)
        return M;
    const double r = write_s / (2 * M);
    return std::sqrt(2 * write_s * M) * (1 + std::sqrt(r) / 3 + r / 9) - write_s;
}

double best_interval_s(double write_s, double interruptions_per_s)
{
    if (interruptions_per_s <= 0)
        return 0.0;
    // d/dT of (e^(lambda (T + C)) - 1) / T = 0  <=>  h(x) = e^(x + a) (x - 1) + 1 = 0; h(0) <= 0 < h(1).
    const double a = interruptions_per_s * write_s;
    auto h = [a](double x) { return (x - 1) * std::expm1(x + a) + x; };
    double lo = 0, hi = 1;
    for (int i = 0; i < kBisectionSteps && hi - lo > 1e-15 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (h(mid) < 0 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi) / interruptions_per_s;
}

RecoveryCost recovery_cost(const ReliabilitySpec& spec, const GoodputPlan& plan)
{
    const Rates rates = interruption_rates(spec, plan);
    RecoveryCost c;
    c.restart_s = spec.restart_overhead_s;
    c.warmup_s = kWarmupSteps * plan.step_time_s;
    // Mean wait for a replacement, weighted by how often each kind of interruption happens.
    const double total = rates.total();
    const double wait_s = total > 0
        ? (rates.failures_per_s * spec.replacement_delay_s + rates.preemptions_per_s * plan.preemption_replacement_s)
            / total
        : spec.replacement_delay_s;
    const bool from_replicas = spec.recovery != RecoveryStrategy::checkpoint && plan.data_parallel_copies >= 2;
    const double fabric_Bps = plan.inter_node_Bps_per_node;
    c.reload_s = from_replicas && fabric_Bps > 0
        ? lost_node_state_bytes(plan) / fabric_Bps
        : checkpoint_transfer_s(plan.checkpoint_bytes, spec.checkpoint_read_GBps_per_node, plan.nodes);
    // replan keeps the surviving replicas training until the replacement arrives: the wait costs
    // only the lost replica's share of the throughput.
    c.replacement_s = spec.recovery == RecoveryStrategy::replan ? wait_s * (1 - survivors_fraction(plan)) : wait_s;
    return c;
}

double goodput_tokens_per_s(const ReliabilitySpec& spec, const GoodputPlan& plan)
{
    CheckpointProcess p;
    p.interruptions_per_s = interruption_rates(spec, plan).total();
    p.write_s = checkpoint_transfer_s(plan.checkpoint_bytes, spec.checkpoint_write_GBps_per_node, plan.nodes);
    p.recovery = recovery_cost(spec, plan);
    const double best = best_interval_s(p.write_s, p.interruptions_per_s);
    p.interval_s = spec.checkpoint_interval_s ? *spec.checkpoint_interval_s : best;
    if (p.interval_s <= 0)
        return plan.tokens_per_s; // no interruptions and no checkpoints
    return plan.tokens_per_s * expected_time_fractions(p).useful;
}

// What the report rests on, in words (predict prints them).
std::vector<std::string> goodput_assumptions(const ReliabilitySpec& spec, const GoodputPlan& plan)
{
    std::vector<std::string> out;
    const double bytes_per_parameter = plan.parameters > 0 ? plan.checkpoint_bytes / plan.parameters : 0.0;
    out.push_back(format("checkpoint = bf16 weights + optimizer states, %.0f B per parameter: ", bytes_per_parameter)
        + format(
            "%.2f TB, written synchronously by all %.0f nodes in parallel", plan.checkpoint_bytes / 1e12, plan.nodes));
    out.push_back(format("warm-up after a restart: %.0f step", kWarmupSteps));
    const bool from_replicas = spec.recovery != RecoveryStrategy::checkpoint && plan.data_parallel_copies >= 2;
    if (spec.recovery != RecoveryStrategy::checkpoint && !from_replicas)
        out.push_back("no stage has a second data-parallel replica: the lost state is reloaded from the "
                      "checkpoint");
    if (from_replicas)
        out.push_back("the lost node's state (" + format("%.1f GB", lost_node_state_bytes(plan) / 1e9)
            + ") comes from a surviving replica over the inter-node fabric; the job still rolls back to the last "
              "checkpoint, which the replicas keep in host memory");
    if (spec.recovery == RecoveryStrategy::replan && plan.data_parallel_copies >= 2) {
        if (plan.survivor_throughput_fraction >= 0)
            out.push_back(format("replan: the survivors' plan (one data-parallel replica fewer) re-predicted: "
                                 "%.1f%% of the throughput until the replacement arrives",
                100 * survivors_fraction(plan)));
        else
            out.push_back(format("replan: the surviving %.0f of %.0f data-parallel replicas keep training at "
                                 "their share of the throughput until the replacement arrives (not "
                                 "re-predicted)",
                plan.data_parallel_copies - 1.0, static_cast<double>(plan.data_parallel_copies)));
    }
    return out;
}

GoodputReport predict_goodput(const ReliabilitySpec& spec, const GoodputPlan& plan)
{
    GoodputReport g;
    const Rates rates = interruption_rates(spec, plan);
    CheckpointProcess p;
    p.interruptions_per_s = rates.total();
    p.write_s = checkpoint_transfer_s(plan.checkpoint_bytes, spec.checkpoint_write_GBps_per_node, plan.nodes);
    p.recovery = recovery_cost(spec, plan);
    g.throughput_tokens_per_s = plan.tokens_per_s;
    g.interruptions_per_day = rates.total() * kSecondsPerDay;
    g.failures_per_day = rates.failures_per_s * kSecondsPerDay;
    g.preemptions_per_day = rates.preemptions_per_s * kSecondsPerDay;
    g.checkpoint_bytes = plan.checkpoint_bytes;
    g.checkpoint_write_s = p.write_s;
    g.checkpoint_read_s = checkpoint_transfer_s(plan.checkpoint_bytes, spec.checkpoint_read_GBps_per_node, plan.nodes);
    g.recovery = spec.recovery;
    g.recovery_cost = p.recovery;
    g.young_interval_s = young_interval_s(p.write_s, p.interruptions_per_s);
    g.daly_interval_s = daly_interval_s(p.write_s, p.interruptions_per_s);
    g.best_checkpoint_interval_s = best_interval_s(p.write_s, p.interruptions_per_s);
    g.checkpoint_interval_s = spec.checkpoint_interval_s ? *spec.checkpoint_interval_s : g.best_checkpoint_interval_s;
    p.interval_s = g.checkpoint_interval_s;
    if (p.interval_s > 0)
        g.time = expected_time_fractions(p);
    g.fraction_of_throughput = g.time.useful;
    g.tokens_per_s = plan.tokens_per_s * g.time.useful;
    CheckpointProcess at_best = p;
    at_best.interval_s = g.best_checkpoint_interval_s;
    g.best_tokens_per_s
        = at_best.interval_s > 0 ? plan.tokens_per_s * expected_time_fractions(at_best).useful : plan.tokens_per_s;
    g.assumptions = goodput_assumptions(spec, plan);
    return g;
}

} // namespace parallax
