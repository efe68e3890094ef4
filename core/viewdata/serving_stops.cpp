#include "viewdata/serving_stops.hpp"

#include "serving/serving_rules.hpp"
#include "spec/input_error.hpp"

#include <algorithm>

namespace parallax {

namespace {

// Replica counts up to this many are offered one by one; beyond it in powers of two.
constexpr int kEveryReplicaUpTo = 64;

std::vector<int> candidate_values(const ServingScenario& s, ServingDegree d)
{
    const long long gpus = s.cluster.total_gpus();
    std::vector<int> values;
    if (d == ServingDegree::replicas) {
        const long long most = gpus / std::max(1, s.deployment.instance.gpus());
        for (long long v = 1; v <= most; v = v < kEveryReplicaUpTo ? v + 1 : v * 2)
            values.push_back(static_cast<int>(v));
        if (most >= 1)
            values.push_back(static_cast<int>(most));
    } else {
        long long last = gpus;
        if (d == ServingDegree::pp)
            last = std::min<long long>(last, s.model.layers);
        if (d == ServingDegree::ep && s.model.is_moe())
            last = std::min<long long>(last, s.model.moe->experts);
        for (long long v = 1; v <= last; v *= 2)
            values.push_back(static_cast<int>(v));
    }
    values.push_back(degree_of(s, d));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    values.erase(std::remove(values.begin(), values.end(), 0), values.end());
    return values;
}

} // namespace

int degree_of(const ServingScenario& s, ServingDegree d)
{
    const InstanceLayout& l = s.deployment.instance;
    switch (d) {
    case ServingDegree::tp:
        return l.tp;
    case ServingDegree::pp:
        return l.pp;
    case ServingDegree::ep:
        return l.ep;
    case ServingDegree::attention_dp:
        return l.attention_dp;
    case ServingDegree::replicas:
        return s.replicas();
    }
    return 1;
}

ServingScenario with_degree(const ServingScenario& s, ServingDegree d, int value)
{
    ServingScenario out = s;
    InstanceLayout& l = out.deployment.instance;
    switch (d) {
    case ServingDegree::tp:
        l.tp = value;
        break;
    case ServingDegree::pp:
        l.pp = value;
        break;
    case ServingDegree::ep:
        l.ep = value;
        break;
    case ServingDegree::attention_dp:
        l.attention_dp = value;
        break;
    case ServingDegree::replicas:
        out.deployment.replicas = value > 0 ? std::optional<int>(value) : std::nullopt;
        return out;
    }
    // Without attention DP there is no exchange between ranks to choose: the MoE layer all-reduces.
    if (l.attention_dp == 1)
        l.moe_exchange = MoeExchange::all_to_all;
    // A larger instance keeps as many of the chosen replicas as still fit, rather than being refused.
    if (out.deployment.replicas && l.gpus() > 0) {
        const long long fit = out.cluster.total_gpus() / l.gpus();
        out.deployment.replicas = static_cast<int>(std::clamp<long long>(fit, 1, *out.deployment.replicas));
    }
    return out;
}

std::vector<ServingStop> serving_degree_stops(const ServingScenario& s, ServingDegree d)
{
    std::vector<ServingStop> stops;
    if (s.deployment.disaggregated)
        return stops;
    for (int v : candidate_values(s, d)) {
        ServingStop stop { v, true, {} };
        try {
            check_serving_scenario(with_degree(s, d, v), std::string());
        } catch (const InputError& e) {
            stop.valid = false;
            stop.why = e.key() + ": " + e.rule();
        }
        stops.push_back(stop);
    }
    return stops;
}

} // namespace parallax
