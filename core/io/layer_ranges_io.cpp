#include "io/layer_ranges_io.hpp"

#include "io/json_reader.hpp"
#include "model/topology.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>

namespace parallax {

namespace {

constexpr const char* kDoc = " (docs/composite-strategies.md)";
// The largest parallel degree a scenario may name (as the strategy reader's bound).
constexpr long long kMaxDegree = 1 << 20;

// Checks `rules` on the strategy with one setting replaced; throws naming the range's key.
void check_rules(const PlanInputs& in, const Strategy& s, std::initializer_list<Rule> rules, const std::string& file,
    const std::string& key)
{
    for (Rule rule : rules)
        if (!rule_holds(rule, in, s))
            throw InputError(file, key, explain(rule, in, s));
}

std::string num(long long v)
{
    return std::to_string(v);
}

// The TP group a strategy's rank order places on the cluster spans more than one node.
bool tp_group_crosses_nodes(const Scenario& sc, const Strategy& s)
{
    return place_group(s.rank_order, LayoutSizes::dense(s), { ParallelDim::tp }, sc.cluster.gpus_per_node).nodes > 1;
}

// A range of its own TP or CP regroups the stage's tp * cp * dp GPUs as tp' * cp' * dp': dp' must be whole,
// each regrouped replica must take whole sequences of the micro-batch, and its TP group must stay in a node
// when the plan's does (the relayout and every TP collective of the range would otherwise cross the fabric).
void check_regroup(const Scenario& sc, const LayerRange& lr, const std::string& file, const std::string& path)
{
    const Strategy& plain = sc.strategy;
    const long long tp = lr.tp.value_or(plain.tp), cp = lr.cp.value_or(plain.cp);
    if (tp == plain.tp && cp == plain.cp)
        return;
    const std::string key = path + (lr.tp && tp != plain.tp ? ".tp" : ".cp");
    const long long block = static_cast<long long>(plain.tp) * plain.cp;
    const long long gpus = block * plain.dp;
    const std::string regroup = "the range regroups the stage's tp*cp*dp = " + num(plain.tp) + "*" + num(plain.cp) + "*"
        + num(plain.dp) + " = " + num(gpus) + " GPUs as tp*cp = " + num(tp) + "*" + num(cp);
    if (gpus % (tp * cp) != 0)
        throw InputError(file, key,
            regroup + ", which must divide " + num(gpus) + " (its data-parallel degree is " + num(gpus) + "/"
                + num(tp * cp) + ", not a whole number)" + kDoc);
    if ((static_cast<long long>(plain.micro_batch) * tp * cp) % block != 0)
        throw InputError(file, key,
            regroup + ": each of its " + num(gpus / (tp * cp)) + " replicas takes micro_batch*" + num(tp * cp) + "/"
                + num(block) + " sequences of each micro-batch, which must be whole (micro_batch is "
                + num(plain.micro_batch) + ")" + kDoc);
    Strategy t = plain;
    t.tp = static_cast<int>(tp);
    t.cp = static_cast<int>(cp);
    t.dp = static_cast<int>(gpus / (tp * cp));
    if (tp != plain.tp && tp_group_crosses_nodes(sc, t) && !tp_group_crosses_nodes(sc, plain))
        throw InputError(file, path + ".tp",
            "a range's TP group must stay inside one node's NVLink domain as the plan's does: tp " + num(tp)
                + " spans nodes of " + num(sc.cluster.gpus_per_node) + " GPUs" + kDoc);
    if (plain.zero >= 3)
        throw InputError(file, key,
            "a range's own tp or cp is not supported yet with zero 3 (FSDP gathers one layer unit at a time "
            "over one data-parallel group per stage)"
                + std::string(kDoc));
}

LayerRange read_range(JsonObjectReader& r, int model_layers)
{
    LayerRange out;
    const nlohmann::json* range = r.raw("range");
    if (!range)
        r.fail("range", "missing (required): [first, last], 0-based inclusive layer indices");
    if (!range->is_array() || range->size() != 2 || !(*range)[0].is_number_integer()
        || !(*range)[1].is_number_integer())
        r.fail("range", "must be [first, last]: two integer layer indices");
    const long long first = (*range)[0].get<long long>();
    const long long last = (*range)[1].get<long long>();
    if (first < 0 || last > model_layers - 1)
        r.fail("range",
            "[" + std::to_string(first) + ", " + std::to_string(last) + "] must lie inside [0, "
                + std::to_string(model_layers - 1) + "] (the model has " + std::to_string(model_layers) + " layers)");
    if (first > last)
        r.fail("range", "first (" + std::to_string(first) + ") must not exceed last (" + std::to_string(last) + ")");
    out.first = static_cast<int>(first);
    out.last = static_cast<int>(last);
    auto degree = [&](const char* key) -> std::optional<int> {
        if (!r.has(key))
            return std::nullopt;
        return static_cast<int>(r.get_int(key, 1, kMaxDegree));
    };
    out.tp = degree("tp");
    out.expert_tp = degree("expert_tp");
    out.cp = degree("cp");
    if (r.has("recompute")) {
        Recompute v {};
        recompute_from_string(r.get_choice("recompute", { "none", "selective", "full" }), v);
        out.recompute = v;
    }
    if (r.has("offload_activations"))
        out.offload_activations = r.get_bool("offload_activations");
    if (r.has("precision")) {
        std::vector<std::string> names(kPrecisionNames.begin(), kPrecisionNames.end());
        out.precision = precision_from_string(r.get_choice("precision", names));
    }
    r.finish();
    return out;
}

// Each override valid under the plain key's rules, then refused where the cost model cannot take it yet.
void check_overrides(const Scenario& sc, const LayerRange& lr, const std::string& file, const std::string& path)
{
    const PlanInputs in { sc.model, sc.training, sc.cluster.gpu, sc.cluster.total_gpus() };
    const Strategy& plain = sc.strategy;
    if (lr.tp) {
        Strategy s = plain;
        s.tp = *lr.tp;
        s.cp = lr.cp.value_or(plain.cp);
        check_rules(
            in, s, { Rule::tp_heads, Rule::tp_kv_heads, Rule::tp_ffn, Rule::cp_heads_all_to_all }, file, path + ".tp");
    }
    if (lr.expert_tp) {
        Strategy s = plain;
        s.tp = lr.tp.value_or(plain.tp);
        s.expert_tp = *lr.expert_tp;
        check_rules(in, s, { Rule::expert_tp_ffn, Rule::expert_tp_ranks }, file, path + ".expert_tp");
    }
    if (lr.cp) {
        Strategy s = plain;
        s.tp = lr.tp.value_or(plain.tp);
        s.cp = *lr.cp;
        check_rules(in, s, { Rule::cp_seq, Rule::cp_heads_all_to_all }, file, path + ".cp");
    }
    if (lr.recompute) {
        Strategy s = plain;
        s.recompute = *lr.recompute;
        if (check_strategy(in, s) != Rule::ok)
            throw InputError(file, path + ".recompute", explain(check_strategy(in, s), in, s));
    }
    if (lr.precision) {
        TrainingSpec t = sc.training;
        t.precision = *lr.precision;
        const PlanInputs pin { sc.model, t, sc.cluster.gpu, sc.cluster.total_gpus() };
        check_rules(pin, plain, { Rule::precision_unsupported }, file, path + ".precision");
        // fp32/tf32 training keeps no 16-bit working copy and no separate master weights: its optimizer
        // states, gradients and activations differ in kind from mixed-precision layers'.
        if (is_full_precision(*lr.precision) != is_full_precision(sc.training.precision))
            throw InputError(file, path + ".precision",
                std::string("cannot mix full-precision (fp32, tf32) and mixed-precision (bf16, fp16, fp8, fp4) "
                            "layers: training.precision is ")
                    + std::string(to_string(sc.training.precision)) + ", the range asks for "
                    + std::string(to_string(*lr.precision)) + kDoc);
    }
    check_regroup(sc, lr, file, path);
    if (lr.expert_tp && *lr.expert_tp != plain.effective_expert_tp() && plain.zero >= 3)
        throw InputError(file, path + ".expert_tp",
            "a range's own expert_tp is not supported yet with zero 3 (FSDP gathers one layer unit at a time "
            "and its unit size is taken per stage)"
                + std::string(kDoc));
}

// How many distinct override combinations the ranges name (each costs one layer setting).
int distinct_overrides(const LayerRanges& r)
{
    int n = 0;
    for (std::size_t i = 0; i < r.ranges.size(); ++i) {
        LayerRange a = r.ranges[i];
        bool seen = false;
        for (std::size_t k = 0; k < i && !seen; ++k) {
            LayerRange b = r.ranges[k];
            b.first = a.first;
            b.last = a.last;
            seen = a == b;
        }
        n += seen ? 0 : 1;
    }
    return n;
}

} // namespace

void read_layer_ranges(const nlohmann::json& layers, const std::string& file, Scenario& s)
{
    if (!layers.is_array())
        throw InputError(
            file, "strategy.layers", "must be a list of {\"range\": [first, last], ...}" + std::string(kDoc));
    if (s.heterogeneous())
        throw InputError(file, "strategy.layers", "is not supported yet with strategy.stages" + std::string(kDoc));
    LayerRanges out;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string path = "strategy.layers[" + std::to_string(i) + "]";
        if (!layers[i].is_object())
            throw InputError(file, path, "must be an object {\"range\": [first, last], ...}");
        JsonObjectReader r(layers[i], file, path);
        const LayerRange lr = read_range(r, s.model.layers);
        for (std::size_t k = 0; k < out.ranges.size(); ++k) {
            const LayerRange& o = out.ranges[k];
            if (lr.first <= o.last && o.first <= lr.last)
                throw InputError(file, path + ".range",
                    "overlaps strategy.layers[" + std::to_string(k) + "] ([" + std::to_string(o.first) + ", "
                        + std::to_string(o.last) + "]): each layer takes its settings from one range");
        }
        check_overrides(s, lr, file, path);
        out.ranges.push_back(lr);
        if (distinct_overrides(out) >= kMaxLayerSettings)
            throw InputError(file, path,
                "a plan's ranges may name at most " + std::to_string(kMaxLayerSettings - 1)
                    + " distinct combinations of settings (ranges with the same settings may repeat)" + kDoc);
    }
    s.strategy.layers = out.ranges.empty() ? nullptr : intern_layer_ranges(std::move(out));
}

nlohmann::json layer_ranges_to_json(const LayerRanges& r)
{
    nlohmann::json a = nlohmann::json::array();
    for (const LayerRange& lr : r.ranges) {
        nlohmann::json j;
        j["range"] = { lr.first, lr.last };
        if (lr.tp)
            j["tp"] = *lr.tp;
        if (lr.expert_tp)
            j["expert_tp"] = *lr.expert_tp;
        if (lr.cp)
            j["cp"] = *lr.cp;
        if (lr.recompute)
            j["recompute"] = std::string(to_string(*lr.recompute));
        if (lr.offload_activations)
            j["offload_activations"] = *lr.offload_activations;
        if (lr.precision)
            j["precision"] = std::string(to_string(*lr.precision));
        a.push_back(j);
    }
    return a;
}

} // namespace parallax
