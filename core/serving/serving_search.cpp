#include "serving/serving_search.hpp"

#include "serving/disaggregated_model.hpp"
#include "serving/serving_rules.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>

namespace parallax {

namespace {

std::vector<int> powers_of_two_up_to(long long n)
{
    std::vector<int> v;
    for (long long x = 1; x <= n; x *= 2)
        v.push_back(static_cast<int>(x));
    return v;
}

bool better_on_both(const ServingPrediction& a, const ServingPrediction& b)
{
    return a.output_tokens_per_s_per_gpu >= b.output_tokens_per_s_per_gpu
        && a.output_tokens_per_s_per_user >= b.output_tokens_per_s_per_user
        && (a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu
            || a.output_tokens_per_s_per_user > b.output_tokens_per_s_per_user);
}

bool same_point(const ServingCandidate& a, const ServingCandidate& b)
{
    constexpr double kRelativeTolerance = 1e-9;
    const auto same = [&](double x, double y) { return std::fabs(x - y) <= kRelativeTolerance * std::max(x, y); };
    return same(a.prediction.output_tokens_per_s_per_gpu, b.prediction.output_tokens_per_s_per_gpu)
        && same(a.prediction.output_tokens_per_s_per_user, b.prediction.output_tokens_per_s_per_user);
}

void mark_pareto(std::vector<ServingCandidate>& c)
{
    for (auto& x : c) {
        x.pareto = std::none_of(
            c.begin(), c.end(), [&](const ServingCandidate& y) { return better_on_both(y.prediction, x.prediction); });
    }
}

// One deployment to predict: an aggregated layout, or prefill and decode pools (layout indices).
struct Job {
    Deployment deployment;
    int prefill_layout = -1;
};

// Disaggregated pools from two layouts: every split of the cluster into prefill and decode workers
// that leaves no room for one more decode worker.
void add_disaggregated(const ServingScenario& base, const std::vector<InstanceLayout>& layouts, std::vector<Job>& out)
{
    const long long gpus = base.cluster.total_gpus();
    for (std::size_t i = 0; i < layouts.size(); ++i)
        for (const auto& dec : layouts) {
            const InstanceLayout& pre = layouts[i];
            if (pre.pp != 1 || dec.pp != 1)
                continue; // a pipeline only adds latency to a pool that only prefills or only decodes
            for (long long p = 1; p * pre.gpus() + dec.gpus() <= gpus; ++p) {
                const long long d = (gpus - p * pre.gpus()) / dec.gpus();
                Job j;
                j.deployment.disaggregated
                    = DisaggregatedDeployment { { pre, static_cast<int>(p) }, { dec, static_cast<int>(d) } };
                j.prefill_layout = static_cast<int>(i);
                out.push_back(j);
            }
        }
}

} // namespace

std::vector<InstanceLayout> serving_layouts(const ModelSpec& m, const ClusterSpec& c)
{
    std::vector<InstanceLayout> out;
    const long long gpus = c.total_gpus();
    for (int tp : powers_of_two_up_to(std::min<long long>(gpus, c.gpus_per_node)))
        for (int pp : powers_of_two_up_to(gpus / tp))
            for (int adp : powers_of_two_up_to(m.is_moe() ? gpus / (static_cast<long long>(tp) * pp) : 1))
                for (int ep : powers_of_two_up_to(m.is_moe() ? static_cast<long long>(tp) * adp : 1)) {
                    InstanceLayout l { tp, pp, ep, adp };
                    try {
                        check_instance_layout(l, m, c, "", "deployment");
                        out.push_back(l);
                        // Under attention DP with EP the engines' stock gather is the other way to move tokens.
                        if (l.exchanges_moe_tokens()) {
                            l.moe_exchange = MoeExchange::gather;
                            out.push_back(l);
                        }
                    } catch (const InputError&) {
                    }
                }
    return out;
}

ServingSearchResult search_serving(const ServingScenario& s, int top, const CancelToken& cancel)
{
    const auto start = std::chrono::steady_clock::now();
    ServingSearchResult r;
    const std::vector<InstanceLayout> layouts = serving_layouts(s.model, s.cluster);
    std::vector<Job> jobs;
    for (const auto& l : layouts) {
        Job j;
        j.deployment.instance = l;
        jobs.push_back(j);
    }
    add_disaggregated(s, layouts, jobs);
    // A prefill pool's cost depends on its layout only: once per layout.
    std::vector<PrefillPoolCost> prefill(layouts.size());
    for (std::size_t i = 0; i < layouts.size(); ++i)
        if (layouts[i].pp == 1)
            prefill[i] = prefill_pool_cost(s, layouts[i]);
    std::vector<ServingCandidate> all(jobs.size());
    const auto evaluate = [&](std::size_t first, std::size_t stride) {
        for (std::size_t i = first; i < jobs.size(); i += stride) {
            if (cancel.cancelled())
                return;
            ServingScenario c = s;
            c.deployment = jobs[i].deployment;
            ServingPrediction p = jobs[i].prefill_layout >= 0
                ? predict_disaggregated(c, &prefill[static_cast<std::size_t>(jobs[i].prefill_layout)])
                : predict_serving(c);
            if (jobs[i].prefill_layout >= 0) {
                check_slo(p, s.serving.slo);
                add_serving_interval(p, c);
            }
            all[i] = ServingCandidate { jobs[i].deployment, std::move(p), false };
        }
    };
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t)
        pool.emplace_back(evaluate, t, threads);
    evaluate(0, threads);
    for (auto& t : pool)
        t.join();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (cancel.cancelled()) {
        r.cancelled = true;
        return r;
    }
    std::vector<ServingCandidate> ok;
    for (auto& x : all) {
        ++r.evaluated;
        if (!x.prediction.feasible)
            continue;
        ++r.feasible;
        if (!x.prediction.slo_met)
            continue;
        ++r.meet_slo;
        ok.push_back(std::move(x));
    }
    mark_pareto(ok);
    for (const auto& x : ok)
        if (x.pareto)
            r.pareto.push_back(x);
    std::stable_sort(r.pareto.begin(), r.pareto.end(), [](const auto& a, const auto& b) {
        return a.prediction.output_tokens_per_s_per_user > b.prediction.output_tokens_per_s_per_user;
    });
    // Deployments that predict the same point (the two MoE exchanges where they move the same bytes, or
    // layouts alike but for their rank order) stand once on the front: the first enumerated.
    r.pareto.erase(std::unique(r.pareto.begin(), r.pareto.end(), same_point), r.pareto.end());
    // Rank by index and move only the best: a candidate carries its whole prediction, and tens of thousands
    // of them meet the SLO on a large pool.
    std::vector<std::size_t> order(ok.size());
    std::iota(order.begin(), order.end(), std::size_t { 0 });
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return ok[a].prediction.output_tokens_per_s_per_gpu > ok[b].prediction.output_tokens_per_s_per_gpu;
    });
    order.resize(std::min(order.size(), static_cast<std::size_t>(std::max(top, 0))));
    for (const std::size_t i : order)
        r.results.push_back(std::move(ok[i]));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace parallax
