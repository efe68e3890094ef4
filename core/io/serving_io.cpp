#include "io/serving_io.hpp"

#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_prediction_io.hpp"
#include "serving/serving_rules.hpp"
#include "serving/speculative_decoding.hpp"
#include "spec/input_error.hpp"

namespace parallax {

using nlohmann::json;

namespace {

const std::vector<std::string> kPrecisions = { "bf16", "fp16", "fp8", "fp4" };
const std::vector<std::string> kLoadKeys = { "concurrency", "request_rate_qps", "batch_size", "max_throughput" };
constexpr long long kMaxTokens = 10'000'000; // beyond any context window shipped today
constexpr long long kMaxRequests = 10'000'000;
constexpr int kMaxDegree = 1 << 20;
constexpr long long kMaxDraftTokens = 16; // the engines draft a handful (vLLM, SGLang, TensorRT-LLM: 1-8)

// "precision": "fp8" (the weights) or {"weights": .., "kv_cache": ..}. KV defaults to bf16, or fp16
// when the weights are fp16 (an fp16 checkpoint keeps its cache in fp16).
ServingPrecision read_precision(const json* v, const std::string& file)
{
    ServingPrecision p;
    if (!v)
        return p;
    if (v->is_string()) {
        const std::string s = v->get<std::string>();
        const auto w = precision_from_string(s);
        if (!w || w == Precision::fp32 || w == Precision::tf32)
            throw InputError(file, "serving.precision", "must be one of bf16, fp16, fp8, fp4, got \"" + s + "\"");
        p.weights = *w;
        p.kv_cache = p.weights == Precision::fp16 ? Precision::fp16 : Precision::bf16;
        return p;
    }
    JsonObjectReader r(*v, file, "serving.precision");
    p.weights = *precision_from_string(r.get_choice("weights", kPrecisions, std::string("bf16")));
    const std::string kv_default = p.weights == Precision::fp16 ? "fp16" : "bf16";
    p.kv_cache = *precision_from_string(r.get_choice("kv_cache", kPrecisions, kv_default));
    r.finish();
    return p;
}

ServingWorkload read_workload(const json& v, const std::string& file)
{
    JsonObjectReader r(v, file, "serving.workload");
    ServingWorkload w;
    w.isl = r.get_int("isl", 1, kMaxTokens);
    w.osl = r.get_int("osl", 1, kMaxTokens);
    std::vector<std::string> given;
    for (const auto& k : kLoadKeys)
        if (r.has(k) && !v.at(k).is_null())
            given.push_back(k);
    if (given.empty())
        throw InputError(file, "serving.workload",
            "exactly one of concurrency, request_rate_qps, batch_size, max_throughput must be given, found none");
    if (given.size() > 1)
        r.fail(given[1],
            "exactly one of concurrency, request_rate_qps, batch_size, max_throughput must be given; \"" + given[0]
                + "\" is given too");
    if (r.has("concurrency")) {
        w.load = LoadKind::concurrency;
        w.concurrency = r.get_int("concurrency", 1, kMaxRequests);
        w.rounds = r.get_int("rounds", 0, kMaxRequests, 0);
    } else if (r.has("rounds")) {
        r.fail("rounds", "only a closed loop (concurrency) sends requests in rounds");
    } else if (r.has("request_rate_qps")) {
        w.load = LoadKind::request_rate;
        w.request_rate_qps = r.get_number("request_rate_qps", 1e-9, 1e9);
    } else if (r.has("batch_size")) {
        w.load = LoadKind::batch_size;
        w.batch_size = r.get_int("batch_size", 1, kMaxRequests);
    } else {
        w.load = LoadKind::max_throughput;
        if (!r.get_bool("max_throughput"))
            r.fail("max_throughput", "must be true when given (leave it out and name another load)");
    }
    r.finish();
    return w;
}

ServingSlo read_slo(const json* v, const std::string& file)
{
    ServingSlo s;
    if (!v || v->is_null())
        return s;
    JsonObjectReader r(*v, file, "serving.slo");
    s.ttft_ms = r.get_optional_number("ttft_ms", 1e-6, 1e9);
    s.tpot_ms = r.get_optional_number("tpot_ms", 1e-6, 1e9);
    r.finish();
    return s;
}

// "speculative": {"draft": "mtp" | "eagle", "draft_tokens": k, and one of "acceptance_rate" (0-1, per draft
// token) or "acceptance_length" (mean tokens a request gains per step, 1 to k + 1)}.
std::optional<SpeculativeDecoding> read_speculative(const json* v, const std::string& file)
{
    if (!v || v->is_null())
        return std::nullopt;
    JsonObjectReader r(*v, file, "serving.speculative");
    SpeculativeDecoding d;
    d.draft = *draft_kind_from_string(r.get_choice("draft", { "mtp", "eagle" }, std::string("mtp")));
    d.draft_tokens = static_cast<int>(r.get_int("draft_tokens", 1, kMaxDraftTokens));
    const bool rate = r.has("acceptance_rate");
    const bool length = r.has("acceptance_length");
    if (rate == length)
        throw InputError(file, "serving.speculative",
            rate ? "give one of acceptance_rate and acceptance_length, not both"
                 : "needs acceptance_rate (0-1, each draft token) or acceptance_length (mean tokens per step)");
    if (rate)
        d.acceptance_rate = r.get_number("acceptance_rate", 0.0, 1.0);
    else
        d.acceptance_length = r.get_number("acceptance_length", 1.0, 1.0 + d.draft_tokens);
    r.finish();
    return d;
}

ServingSpec read_serving(const json& v, const std::string& file)
{
    JsonObjectReader r(v, file, "serving");
    ServingSpec s;
    s.precision = read_precision(r.raw("precision"), file);
    s.engine = *serving_engine_from_string(r.get_choice("engine", { "vllm", "sglang", "trtllm" }, std::string("vllm")));
    const json* workload = r.raw("workload");
    if (!workload)
        r.fail("workload",
            "missing (required): {\"isl\", \"osl\", and one of "
                + std::string("concurrency, request_rate_qps, batch_size, max_throughput}"));
    s.workload = read_workload(*workload, file);
    s.slo = read_slo(r.raw("slo"), file);
    s.speculative = read_speculative(r.raw("speculative"), file);
    if (r.has("mixed_chunk")) {
        if (s.engine != ServingEngine::sglang)
            r.fail("mixed_chunk",
                "only SGLang's steps can be set to carry prompts apart from decodes; vLLM and TensorRT-LLM always "
                "batch them together");
        s.mixed_chunk = r.get_bool("mixed_chunk");
    }
    r.finish();
    return s;
}

InstanceLayout read_layout(JsonObjectReader& r)
{
    InstanceLayout l;
    l.tp = static_cast<int>(r.get_int("tp", 1, kMaxDegree, 1));
    l.pp = static_cast<int>(r.get_int("pp", 1, kMaxDegree, 1));
    l.ep = static_cast<int>(r.get_int("ep", 1, kMaxDegree, 1));
    l.attention_dp = static_cast<int>(r.get_int("attention_dp", 1, kMaxDegree, 1));
    l.moe_exchange = *moe_exchange_from_string(
        r.get_choice("moe_exchange", { "all_to_all", "gather" }, std::string(to_string(MoeExchange::all_to_all))));
    return l;
}

DisaggregatedPool read_pool(const json* v, const std::string& file, const std::string& path)
{
    if (!v)
        throw InputError(file, path, "missing (required): {\"tp\", \"workers\", ...}");
    JsonObjectReader r(*v, file, path);
    DisaggregatedPool p;
    p.layout = read_layout(r);
    p.workers = static_cast<int>(r.get_int("workers", 1, kMaxDegree, 1));
    r.finish();
    return p;
}

Deployment read_deployment(const json* v, const std::string& file)
{
    Deployment d;
    if (!v || v->is_null())
        return d;
    JsonObjectReader r(*v, file, "deployment");
    if (const json* dis = r.raw("disaggregated"); dis && !dis->is_null()) {
        for (const char* k : { "tp", "pp", "ep", "attention_dp", "moe_exchange", "replicas" })
            if (r.has(k))
                r.fail(k, "not with \"disaggregated\": the prefill and decode pools carry their own degrees");
        JsonObjectReader dr(*dis, file, "deployment.disaggregated");
        DisaggregatedDeployment dd;
        dd.prefill = read_pool(dr.raw("prefill"), file, "deployment.disaggregated.prefill");
        dd.decode = read_pool(dr.raw("decode"), file, "deployment.disaggregated.decode");
        dr.finish();
        d.disaggregated = dd;
        r.finish();
        return d;
    }
    d.instance = read_layout(r);
    if (r.has("replicas"))
        d.replicas = static_cast<int>(r.get_int("replicas", 1, kMaxDegree));
    r.finish();
    return d;
}

json workload_to_json(const ServingWorkload& w)
{
    json j { { "isl", w.isl }, { "osl", w.osl } };
    switch (w.load) {
    case LoadKind::concurrency:
        j["concurrency"] = w.concurrency;
        if (w.rounds > 0)
            j["rounds"] = w.rounds;
        break;
    case LoadKind::request_rate:
        j["request_rate_qps"] = w.request_rate_qps;
        break;
    case LoadKind::batch_size:
        j["batch_size"] = w.batch_size;
        break;
    case LoadKind::max_throughput:
        j["max_throughput"] = true;
        break;
    }
    return j;
}

json serving_to_json(const ServingSpec& s)
{
    json j;
    j["precision"] = { { "weights", std::string(to_string(s.precision.weights)) },
        { "kv_cache", std::string(to_string(s.precision.kv_cache)) } };
    j["engine"] = std::string(to_string(s.engine));
    j["workload"] = workload_to_json(s.workload);
    json slo = json::object();
    if (s.slo.ttft_ms)
        slo["ttft_ms"] = *s.slo.ttft_ms;
    if (s.slo.tpot_ms)
        slo["tpot_ms"] = *s.slo.tpot_ms;
    if (!slo.empty())
        j["slo"] = slo;
    if (const auto& d = s.speculative) {
        json spec { { "draft", std::string(to_string(d->draft)) }, { "draft_tokens", d->draft_tokens } };
        if (d->acceptance_rate)
            spec["acceptance_rate"] = *d->acceptance_rate;
        if (d->acceptance_length)
            spec["acceptance_length"] = *d->acceptance_length;
        j["speculative"] = spec;
    }
    if (s.mixed_chunk)
        j["mixed_chunk"] = *s.mixed_chunk;
    return j;
}

} // namespace

json serving_scenario_to_json(const ServingScenario& s)
{
    json j;
    j["schema"] = s.schema;
    if (!s.description.empty())
        j["description"] = s.description;
    j["model"] = s.refs.model.empty() ? model_to_json(s.model) : json(s.refs.model);
    j["cluster"] = cluster_to_json(s.cluster, s.refs);
    j["serving"] = serving_to_json(s.serving);
    j["deployment"] = deployment_to_json(s.deployment);
    return j;
}

bool is_serving_scenario(const json& j)
{
    return j.is_object() && j.contains("serving");
}

bool is_serving_scenario_file(const std::string& path)
{
    try {
        return is_serving_scenario(parse_json_text(read_text_file(path), path));
    } catch (const std::exception&) {
        return false;
    }
}

ServingScenario parse_serving_scenario(const json& j, const std::string& file, const PresetCatalog& catalog)
{
    JsonObjectReader r(j, file, "");
    ServingScenario s;
    s.schema = read_scenario_schema(r);
    s.description = r.get_string("description", std::string());
    for (const char* k : { "training", "strategy", "search" })
        if (r.has(k))
            r.fail(k, "not in a serving scenario (it has \"serving\"): training keys describe a training run");
    const json* model = r.raw("model");
    if (!model)
        r.fail("model", "missing (required): a model preset name or an inline model object");
    s.model = resolve_model(*model, file, "model", catalog, &s.refs.model);
    const json* cluster = r.raw("cluster");
    if (!cluster)
        r.fail("cluster", "missing (required): a cluster preset name or an inline cluster object");
    s.cluster = resolve_cluster(*cluster, file, "cluster", catalog, &s.refs);
    s.serving = read_serving(*r.raw("serving"), file);
    s.deployment = read_deployment(r.raw("deployment"), file);
    r.finish();
    check_serving_scenario(s, file);
    return s;
}

ServingSpec parse_serving_spec(const json& serving, const std::string& file)
{
    return read_serving(serving, file);
}

ServingScenario load_serving_scenario_file(const std::string& path, const PresetCatalog& catalog)
{
    return parse_serving_scenario(parse_json_text(read_text_file(path), path), path, catalog);
}

} // namespace parallax
