#include "power/power_trace.hpp"

#include "model/power_model.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

struct Edge {
    double t;
    int kind; // 0: an op ends, 1: an op starts (ends first at equal times)
    bool compute;
    float W;
    bool operator<(const Edge& o) const { return t < o.t || (t == o.t && kind < o.kind); }
};

void integrate(DevicePower& d, double makespan)
{
    d.energy_J = 0;
    d.peak_W = 0;
    d.min_W = d.steps.empty() ? 0 : d.steps.front().W;
    for (std::size_t k = 0; k < d.steps.size(); ++k) {
        const double t1 = k + 1 < d.steps.size() ? d.steps[k + 1].t_s : makespan;
        const double dt = std::max(0.0, t1 - d.steps[k].t_s);
        d.energy_J += d.steps[k].W * dt;
        if (dt > 0) {
            d.peak_W = std::max(d.peak_W, d.steps[k].W);
            d.min_W = std::min(d.min_W, d.steps[k].W);
        }
    }
    d.avg_W = makespan > 0 ? d.energy_J / makespan : 0;
}

void push_step(std::vector<PowerStep>& steps, double t, double W)
{
    if (!steps.empty() && steps.back().W == W)
        return;
    if (!steps.empty() && steps.back().t_s == t) {
        steps.back().W = W;
        if (steps.size() > 1 && steps[steps.size() - 2].W == W)
            steps.pop_back();
        return;
    }
    steps.push_back({ t, W });
}

PowerTrace::Buckets bucketize(const std::vector<PowerStep>& steps, double makespan, double t0, double t1, int n)
{
    PowerTrace::Buckets b;
    b.t0 = t0;
    b.t1 = t1;
    n = std::max(1, n);
    b.mean_W.assign(static_cast<std::size_t>(n), 0.0f);
    b.max_W.assign(static_cast<std::size_t>(n), 0.0f);
    if (!(t1 > t0) || steps.empty())
        return b;
    const double width = (t1 - t0) / n;
    std::vector<double> sum(static_cast<std::size_t>(n), 0.0);
    // First step that covers t0.
    auto it = std::upper_bound(steps.begin(), steps.end(), t0, [](double t, const PowerStep& s) { return t < s.t_s; });
    std::size_t k = it == steps.begin() ? 0 : static_cast<std::size_t>(it - steps.begin() - 1);
    for (; k < steps.size(); ++k) {
        const double a = std::max(t0, steps[k].t_s);
        const double e = std::min(t1, k + 1 < steps.size() ? steps[k + 1].t_s : makespan);
        if (a >= t1)
            break;
        if (e <= a)
            continue;
        const int first = std::clamp(static_cast<int>((a - t0) / width), 0, n - 1);
        const int last = std::clamp(static_cast<int>((e - t0) / width), 0, n - 1);
        for (int i = first; i <= last; ++i) {
            const double lo = std::max(a, t0 + i * width);
            const double hi = std::min(e, t0 + (i + 1) * width);
            if (hi > lo) {
                sum[static_cast<std::size_t>(i)] += steps[k].W * (hi - lo);
                b.max_W[static_cast<std::size_t>(i)]
                    = std::max(b.max_W[static_cast<std::size_t>(i)], static_cast<float>(steps[k].W));
            }
        }
    }
    for (int i = 0; i < n; ++i)
        b.mean_W[static_cast<std::size_t>(i)] = static_cast<float>(sum[static_cast<std::size_t>(i)] / width);
    return b;
}

} // namespace

PowerTrace::Buckets PowerTrace::bucketed(int device, double t0, double t1, int buckets) const
{
    if (device < 0 || device >= static_cast<int>(devices.size()))
        return bucketize({}, makespan_s, t0, t1, buckets);
    return bucketize(devices[static_cast<std::size_t>(device)].steps, makespan_s, t0, t1, buckets);
}

PowerTrace::Buckets PowerTrace::bucketed_cluster(double t0, double t1, int buckets) const
{
    return bucketize(cluster_W, makespan_s, t0, t1, buckets);
}

PowerTrace power_trace(const PlanContext& ctx, const Strategy& s, const LoweredPlan& plan, const SimulationResult& sim)
{
    const ExecutionGraph& g = plan.graph;
    const PowerModel& pm = ctx.power;
    PowerTrace tr;
    tr.makespan_s = sim.makespan_s;
    const int devices = std::max(1, g.devices);
    tr.gpus_per_device = static_cast<double>(s.total_gpus()) / devices;
    std::vector<std::vector<Edge>> edges(static_cast<std::size_t>(devices));
    for (std::uint32_t i = 0; i < g.size(); ++i) {
        if (g.type(i) == IrOpType::barrier || g.duration_s(i) <= 0 || i >= plan.op_power_W.size())
            continue;
        const bool compute = g.stream(i) == IrStream::compute;
        auto& e = edges[g.device(i)];
        e.push_back({ sim.start_s[i], 1, compute, plan.op_power_W[i] });
        e.push_back({ sim.end_s[i], 0, compute, plan.op_power_W[i] });
    }
    tr.devices.resize(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d) {
        auto& e = edges[static_cast<std::size_t>(d)];
        std::sort(e.begin(), e.end());
        const double wait = d < static_cast<int>(plan.device_wait_W.size()) ? plan.device_wait_W[d] : pm.wait_W;
        DevicePower& dp = tr.devices[static_cast<std::size_t>(d)];
        double compute_W = wait;
        int comm = 0;
        auto power = [&] {
            // One or more collectives add the links' and NCCL's power; the limiter keeps the board within
            // the cap unless the kernels alone already exceed it.
            if (comm <= 0)
                return compute_W;
            return std::min(std::max(pm.cap_W, compute_W), compute_W + pm.comm_W);
        };
        push_step(dp.steps, 0.0, power());
        for (const Edge& x : e) {
            if (x.compute)
                compute_W = x.kind == 1 ? x.W : wait;
            else
                comm += x.kind == 1 ? 1 : -1;
            push_step(dp.steps, x.t, power());
        }
        integrate(dp, tr.makespan_s);
    }
    // Cluster: every stage's representative times its GPUs, plus the nodes' overhead.
    const double gpus = static_cast<double>(s.total_gpus());
    const double gpn = std::min(gpus, static_cast<double>(std::max(1, ctx.cluster.gpus_per_node)));
    tr.cluster_overhead_W = ctx.node_overhead_W * std::ceil(gpus / gpn);
    {
        // Merge the devices' step functions: each step changes the sum by its device's difference.
        struct Change {
            double t;
            std::size_t device;
            double W;
            bool operator<(const Change& o) const { return t < o.t; }
        };
        std::vector<Change> changes;
        for (std::size_t d = 0; d < tr.devices.size(); ++d)
            for (const PowerStep& st : tr.devices[d].steps)
                changes.push_back({ st.t_s, d, st.W });
        std::stable_sort(changes.begin(), changes.end());
        std::vector<double> current(tr.devices.size(), 0.0);
        double sum = tr.cluster_overhead_W;
        for (std::size_t k = 0; k < changes.size(); ++k) {
            const Change& c = changes[k];
            sum += (c.W - current[c.device]) * tr.gpus_per_device;
            current[c.device] = c.W;
            if (k + 1 == changes.size() || changes[k + 1].t != c.t)
                push_step(tr.cluster_W, c.t, sum);
        }
        DevicePower c;
        c.steps = tr.cluster_W;
        integrate(c, tr.makespan_s);
        tr.cluster_peak_W = c.peak_W;
        tr.cluster_min_W = c.min_W;
    }
    double energy = 0;
    for (const DevicePower& d : tr.devices) {
        energy += d.energy_J;
        tr.peak_W_per_gpu = std::max(tr.peak_W_per_gpu, d.peak_W);
    }
    tr.avg_W_per_gpu = tr.makespan_s > 0 ? energy / devices / tr.makespan_s : 0;
    return tr;
}

} // namespace parallax
