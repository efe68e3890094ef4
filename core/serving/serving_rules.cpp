#include "serving/serving_rules.hpp"

#include "spec/input_error.hpp"

namespace parallax {

namespace {

std::string num(long long v)
{
    return std::to_string(v);
}

void check_heads(const InstanceLayout& l, const ModelSpec& m, const std::string& file, const std::string& key)
{
    if (m.heads % l.tp != 0)
        throw InputError(
            file, key + ".tp", "must divide the model's attention heads (" + num(m.heads) + "), got " + num(l.tp));
    // KV heads are split across TP ranks, or replicated when there are fewer than ranks (vLLM, TRT-LLM).
    const int kv = m.mla ? 1 : m.kv_heads;
    if (!m.mla && kv % l.tp != 0 && l.tp % kv != 0)
        throw InputError(file, key + ".tp",
            "must divide the model's KV heads (" + num(kv) + ") or be a multiple of them, got " + num(l.tp));
}

void check_experts(const InstanceLayout& l, const ModelSpec& m, const std::string& file, const std::string& key)
{
    if (!m.is_moe()) {
        if (l.ep != 1)
            throw InputError(file, key + ".ep", "must be 1: " + m.name + " has no experts");
        if (l.attention_dp != 1)
            throw InputError(file, key + ".attention_dp",
                "must be 1 for a dense model (attention data parallelism shares MoE layers; use replicas)");
        if (l.moe_exchange != MoeExchange::all_to_all)
            throw InputError(file, key + ".moe_exchange", "applies to MoE layers: " + m.name + " has no experts");
        return;
    }
    if (l.moe_exchange == MoeExchange::gather && l.attention_dp == 1)
        throw InputError(file, key + ".moe_exchange",
            "\"gather\" needs attention_dp > 1: without attention DP every rank already holds the step's tokens and "
            "the MoE layer all-reduces over TP");
    const int shards = l.tp * l.attention_dp;
    if (shards % l.ep != 0)
        throw InputError(file, key + ".ep",
            "must divide tp x attention_dp (" + num(shards) + ": the GPUs that share the MoE layers), got "
                + num(l.ep));
    if (m.moe->experts % l.ep != 0)
        throw InputError(
            file, key + ".ep", "must divide the model's experts (" + num(m.moe->experts) + "), got " + num(l.ep));
}

} // namespace

void check_instance_layout(
    const InstanceLayout& l, const ModelSpec& m, const ClusterSpec& c, const std::string& file, const std::string& key)
{
    check_heads(l, m, file, key);
    if (l.pp > m.layers)
        throw InputError(
            file, key + ".pp", "must not exceed the model's layers (" + num(m.layers) + "), got " + num(l.pp));
    check_experts(l, m, file, key);
    if (l.gpus() > c.total_gpus())
        throw InputError(file, key,
            "one instance needs tp x pp x attention_dp = " + num(l.gpus()) + " GPUs; the cluster has "
                + num(c.total_gpus()));
}

void check_serving_scenario(const ServingScenario& s, const std::string& file)
{
    const Deployment& d = s.deployment;
    if (d.disaggregated) {
        const auto& dis = *d.disaggregated;
        check_instance_layout(dis.prefill.layout, s.model, s.cluster, file, "deployment.disaggregated.prefill");
        check_instance_layout(dis.decode.layout, s.model, s.cluster, file, "deployment.disaggregated.decode");
        const long long gpus = static_cast<long long>(dis.prefill.layout.gpus()) * dis.prefill.workers
            + static_cast<long long>(dis.decode.layout.gpus()) * dis.decode.workers;
        if (gpus > s.cluster.total_gpus())
            throw InputError(file, "deployment.disaggregated",
                "prefill and decode workers need " + num(gpus) + " GPUs; the cluster has "
                    + num(s.cluster.total_gpus()));
        return;
    }
    check_instance_layout(d.instance, s.model, s.cluster, file, "deployment");
    const long long gpus = static_cast<long long>(s.replicas()) * d.instance.gpus();
    if (d.replicas && gpus > s.cluster.total_gpus())
        throw InputError(file, "deployment.replicas",
            num(*d.replicas) + " instances of " + num(d.instance.gpus()) + " GPUs need " + num(gpus)
                + "; the cluster has " + num(s.cluster.total_gpus()));
}

std::vector<std::string> serving_warnings(const ServingScenario& s)
{
    std::vector<std::string> w;
    const Precision p = s.serving.precision.weights;
    if (!s.cluster.gpu.supports(p))
        w.push_back(std::string(to_string(p)) + " weights on " + s.cluster.gpu.name + ", which has no "
            + std::string(to_string(p)) + " tensor cores: modelled as weight-only quantisation (weights read at "
            + std::string(to_string(p)) + ", matmuls at the best precision the GPU has)");
    const InstanceLayout& l = s.deployment.instance;
    if (!s.deployment.disaggregated && l.tp > s.cluster.gpus_per_node)
        w.push_back("tp " + num(l.tp) + " spans nodes (" + num(s.cluster.gpus_per_node)
            + " GPUs per node): its all-reduces cross the inter-node fabric");
    return w;
}

} // namespace parallax
