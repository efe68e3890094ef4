#include "io/import/torchtitan_toml.hpp"

#include "spec/input_error.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

namespace parallax {

namespace {

// Tables that hold nothing the step's cost depends on.
constexpr std::string_view kNoEffectTables[]
    = { "job", "profiling", "metrics", "lr_scheduler", "checkpoint", "validation", "comm", "memory_estimation" };

// torchtitan's model flavours that have a Parallax preset: (model name, flavour) -> preset. torchtitan's
// "llama3" flavours are Llama 3.1's shapes (its configs point hf_assets_path at Llama-3.1).
struct Flavour {
    std::string_view name;
    std::string_view flavour; // lower case
    std::string_view preset;
};
constexpr Flavour kFlavours[]
    = { { "llama3", "8b", "llama3.1-8b" }, { "llama3", "70b", "llama3.1-70b" }, { "llama3", "405b", "llama3.1-405b" },
          { "deepseek_v3", "671b", "deepseek-v3" }, { "qwen3", "30b-a3b", "qwen3-30b-a3b" },
          { "qwen3", "235b-a22b", "qwen3-235b-a22b" }, { "gpt_oss", "120b", "gpt-oss-120b" } };

// torchtitan's pipeline schedule names (torch.distributed.pipelining) -> Parallax's.
struct ScheduleName {
    std::string_view torch;
    std::string_view parallax;
    bool looped; // several stages per rank
    std::string_view note;
};
constexpr ScheduleName kSchedules[]
    = { { "1F1B", "1f1b", false, "" }, { "GPipe", "gpipe", false, "" }, { "Interleaved1F1B", "interleaved", true, "" },
          { "InterleavedZeroBubble", "zb-h1", true, "costed as ZB-H1 (zero bubble)" },
          { "ZBVZeroBubble", "zb-h1", true, "costed as ZB-H1 (zero bubble)" }, { "DualPipeV", "dualpipe", true, "" },
          { "LoopedBFS", "interleaved", true, "costed as interleaved 1F1B" } };

std::string text_of(const toml::node& n)
{
    if (const auto* s = n.as_string())
        return s->get();
    std::ostringstream out;
    if (n.is_array())
        out << *n.as_array();
    else if (n.is_table())
        out << "{...}";
    else
        n.visit([&](const auto& v) {
            if constexpr (toml::is_value<decltype(v)>)
                out << v;
        });
    return out.str();
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

struct Leaf {
    std::string key; // "parallelism.tensor_parallel_degree"
    const toml::node* node;
};

void flatten(const toml::table& t, const std::string& prefix, std::vector<Leaf>& out)
{
    for (const auto& [k, v] : t) {
        const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (const auto* sub = v.as_table())
            flatten(*sub, key, out);
        else
            out.push_back({ key, &v });
    }
}

class TitanReader {
public:
    TitanReader(ImportDraft& d, std::map<std::string, const toml::node*> leaves)
        : m_d(d)
        , m_leaves(std::move(leaves))
    {
    }
    void run();

private:
    const toml::node* take(const std::string& key);
    std::optional<long long> integer(const std::string& key);
    std::optional<bool> boolean(const std::string& key);
    std::optional<std::string> string(const std::string& key);
    void model();
    void training();
    void degrees();
    void data_parallel();
    void schedule();
    void recompute_and_compile();
    void float8();
    void remaining();

    ImportDraft& m_d;
    std::map<std::string, const toml::node*> m_leaves;
    std::optional<long long> m_pp;
};

const toml::node* TitanReader::take(const std::string& key)
{
    const auto it = m_leaves.find(key);
    if (it == m_leaves.end())
        return nullptr;
    const toml::node* n = it->second;
    m_leaves.erase(it);
    return n;
}

std::optional<long long> TitanReader::integer(const std::string& key)
{
    const toml::node* n = take(key);
    if (!n)
        return std::nullopt;
    if (!n->is_integer())
        throw InputError(m_d.report.file, key, "must be an integer, found " + text_of(*n));
    return n->as_integer()->get();
}

std::optional<bool> TitanReader::boolean(const std::string& key)
{
    const toml::node* n = take(key);
    if (!n)
        return std::nullopt;
    if (!n->is_boolean())
        throw InputError(m_d.report.file, key, "must be true or false, found " + text_of(*n));
    return n->as_boolean()->get();
}

std::optional<std::string> TitanReader::string(const std::string& key)
{
    const toml::node* n = take(key);
    if (!n)
        return std::nullopt;
    if (!n->is_string())
        throw InputError(m_d.report.file, key, "must be a string, found " + text_of(*n));
    return n->as_string()->get();
}

void TitanReader::model()
{
    m_d.model_key = "model.flavor";
    const auto name = string("model.name");
    const auto flavour = string("model.flavor");
    const Flavour* match = nullptr;
    for (const Flavour& f : kFlavours)
        if (name && flavour && f.name == *name && f.flavour == lower(*flavour))
            match = &f;
    if (match) {
        m_d.model_preset = std::string(match->preset);
        m_d.report.mapped("model.name", *name, "model", "with model.flavor: the preset " + std::string(match->preset));
        m_d.report.mapped("model.flavor", *flavour, "model", "the preset " + std::string(match->preset));
    } else {
        const std::string what = name.value_or("?") + " " + flavour.value_or("?");
        m_d.report.not_modelled(
            "model.name", name.value_or(""), "no Parallax preset for " + what + "; --model gives the model");
        if (flavour) {
            m_d.report.not_modelled("model.flavor", *flavour, "no Parallax preset for " + what);
            m_d.model_preset_candidate = *flavour;
        }
    }
    if (const toml::node* conv = take("model.converters")) {
        const std::string text = text_of(*conv);
        if (text.find("float8") != std::string::npos)
            m_d.set("training.precision", "fp8", "model.converters", text, "torchao float8 training");
        else if (text.find("mx") != std::string::npos)
            m_d.report.not_modelled("model.converters", text, "MX formats are not modelled");
        else
            m_d.report.no_effect("model.converters", text);
    }
}

void TitanReader::degrees()
{
    static const std::pair<const char*, const char*> kDegrees[] = { { "tensor_parallel_degree", "strategy.tp" },
        { "pipeline_parallel_degree", "strategy.pp" }, { "context_parallel_degree", "strategy.cp" },
        { "expert_parallel_degree", "strategy.ep" }, { "expert_tensor_parallel_degree", "strategy.expert_tp" } };
    for (const auto& [key, target] : kDegrees) {
        const std::string k = std::string("parallelism.") + key;
        if (const auto v = integer(k)) {
            if (*v < 1)
                throw InputError(m_d.report.file, k, "must be at least 1, found " + std::to_string(*v));
            m_d.set(target, *v, k, std::to_string(*v));
        }
    }
    m_pp = m_d.get_int("strategy.pp", 1);
    // torchtitan's tensor parallel plan always shards the norms by sequence (SequenceParallel on
    // attention_norm / ffn_norm in models/llama3/infra/parallelize.py apply_tp): TP implies SP.
    if (m_d.get_int("strategy.tp", 1) > 1) {
        m_d.put("strategy.sequence_parallel", true);
        m_d.report.assumed(
            "strategy.sequence_parallel", "true", "torchtitan's tensor parallelism shards the norms by sequence");
    }
    data_parallel();
    if (const auto async_tp = boolean("parallelism.enable_async_tensor_parallel"))
        m_d.set("strategy.tp_comm_overlap", *async_tp, "parallelism.enable_async_tensor_parallel",
            *async_tp ? "true" : "false");
    if (const auto reshard = string("parallelism.fsdp_reshard_after_forward")) {
        if (*reshard == "never")
            m_d.report.not_modelled("parallelism.fsdp_reshard_after_forward", *reshard,
                "parameters kept gathered between forward and backward: costed as ZeRO-3");
        else
            m_d.report.mapped("parallelism.fsdp_reshard_after_forward", *reshard, "strategy.zero");
    }
    if (const auto backend = string("parallelism.expert_parallel_comm_backend"))
        m_d.set("training.moe_dispatcher", *backend == "deepep" ? "deepep" : "all-to-all",
            "parallelism.expert_parallel_comm_backend", *backend);
    if (const auto rotate = string("parallelism.context_parallel_rotate_method")) {
        if (*rotate == "allgather")
            m_d.report.mapped("parallelism.context_parallel_rotate_method", *rotate, "strategy.cp_kind",
                "ring attention with all-gathered K/V (torchtitan's default)");
        else
            m_d.report.not_modelled(
                "parallelism.context_parallel_rotate_method", *rotate, "costed as the all-gather rotation");
    }
}

// Replicate x shard degrees: DDP, FSDP (ZeRO-3) or HSDP, and the GPU count when both are explicit.
void TitanReader::data_parallel()
{
    const auto replicate_given = integer("parallelism.data_parallel_replicate_degree");
    const auto shard_given = integer("parallelism.data_parallel_shard_degree");
    const long long replicate = replicate_given.value_or(1);
    const long long shard = shard_given.value_or(-1);
    if (replicate < 1 || shard == 0 || shard < -1)
        throw InputError(m_d.report.file,
            replicate < 1 ? "parallelism.data_parallel_replicate_degree" : "parallelism.data_parallel_shard_degree",
            "must be at least 1 (the shard degree may be -1: the remaining GPUs)");
    const std::string zero_note = shard == 1 ? "replicated (DDP)"
        : replicate > 1                      ? "HSDP: sharded in groups, costed as ZeRO-3 over all data-parallel ranks"
                                             : "FSDP2 (reshard after forward): ZeRO-3";
    m_d.put("strategy.zero", shard == 1 ? 0 : 3);
    if (shard_given)
        m_d.report.mapped("parallelism.data_parallel_shard_degree", std::to_string(shard), "strategy.zero", zero_note);
    else
        m_d.report.assumed("strategy.zero", "3", "torchtitan's default data_parallel_shard_degree -1: " + zero_note);
    if (replicate_given)
        m_d.report.mapped("parallelism.data_parallel_replicate_degree", std::to_string(replicate), "strategy.dp",
            shard == -1 ? "the shard degree fills the remaining GPUs" : "dp = replicate x shard");
    if (shard > 0) {
        m_d.put("strategy.dp", replicate * shard);
        m_d.total_gpus = replicate * shard * m_d.get_int("strategy.tp", 1) * *m_pp * m_d.get_int("strategy.cp", 1);
    }
}

void TitanReader::schedule()
{
    const long long pp = m_pp.value_or(1);
    const auto name = string("parallelism.pipeline_parallel_schedule");
    const ScheduleName* match = nullptr;
    for (const ScheduleName& s : kSchedules)
        if (name && s.torch == *name)
            match = &s;
    if (name && !match)
        m_d.report.not_modelled("parallelism.pipeline_parallel_schedule", *name, "an unknown schedule; costed as 1F1B");
    if (const auto per = integer("parallelism.pipeline_parallel_layers_per_stage")) {
        m_d.layers_per_pipeline_chunk = *per;
        m_d.layers_per_pipeline_chunk_key = "parallelism.pipeline_parallel_layers_per_stage";
        m_d.pipeline_extra_layers
            = static_cast<int>(integer("parallelism.pipeline_parallel_first_stage_less_layers").value_or(1)
                + integer("parallelism.pipeline_parallel_last_stage_less_layers").value_or(1));
    }
    const auto micro = integer("parallelism.pipeline_parallel_microbatch_size");
    if (pp <= 1) {
        if (name)
            m_d.report.no_effect("parallelism.pipeline_parallel_schedule", *name, "no pipeline parallelism");
        if (micro)
            m_d.report.no_effect(
                "parallelism.pipeline_parallel_microbatch_size", std::to_string(*micro), "no pipeline parallelism");
        return;
    }
    if (match)
        m_d.set("strategy.schedule", std::string(match->parallax), "parallelism.pipeline_parallel_schedule", *name,
            std::string(match->note));
    if (match && match->looped && !m_d.layers_per_pipeline_chunk) {
        m_d.put("strategy.vpp", 2);
        m_d.report.assumed("strategy.vpp", "2", "torchtitan's default for a multi-stage schedule: 2 stages per rank");
    }
    if (micro) {
        m_d.set(
            "strategy.micro_batch", *micro, "parallelism.pipeline_parallel_microbatch_size", std::to_string(*micro));
    } else {
        m_d.put("strategy.micro_batch", 1);
        m_d.report.assumed("strategy.micro_batch", "1", "torchtitan's default pipeline_parallel_microbatch_size");
    }
}

void TitanReader::training()
{
    const bool old_key = m_leaves.count("training.batch_size") > 0;
    const std::string local_key = old_key ? "training.batch_size" : "training.local_batch_size";
    const auto local = integer(local_key);
    const auto global = integer("training.global_batch_size");
    if (const auto seq = integer("training.seq_len"))
        m_d.set("training.seq_len", *seq, "training.seq_len", std::to_string(*seq));
    m_d.seq_len_key = "training.seq_len";
    if (local) {
        if (m_pp.value_or(1) <= 1)
            m_d.set("strategy.micro_batch", *local, local_key, std::to_string(*local),
                "no pipeline: the whole local batch at once");
        else
            m_d.report.mapped(local_key, std::to_string(*local), "training.global_batch",
                "split into pipeline micro-batches of pipeline_parallel_microbatch_size");
        m_d.batch_per_dp_rank = *local;
    }
    if (global && *global > 0)
        m_d.set("training.global_batch", *global, "training.global_batch_size", std::to_string(*global),
            "gradient accumulation makes up the rest");
    else if (global)
        m_d.report.mapped("training.global_batch_size", std::to_string(*global), "training.global_batch",
            "-1: local batch x data-parallel degree");
    if (const auto param = string("training.mixed_precision_param")) {
        if (*param == "bfloat16")
            m_d.report.mapped("training.mixed_precision_param", *param, "training.precision");
        else
            m_d.report.not_modelled(
                "training.mixed_precision_param", *param, "only bf16 parameters (fp32 masters) are modelled");
    }
    if (!m_d.has("training.precision")) {
        m_d.put("training.precision", "bf16");
        m_d.report.assumed("training.precision", "bf16", "torchtitan's default mixed_precision_param bfloat16");
    }
    if (const auto reduce = string("training.mixed_precision_reduce"))
        m_d.report.not_modelled("training.mixed_precision_reduce", *reduce,
            "gradients reduce at the precision Parallax assumes for torchtitan");
    if (const auto offload = boolean("training.enable_cpu_offload"))
        m_d.set("strategy.offload_optimizer", *offload, "training.enable_cpu_offload", *offload ? "true" : "false",
            "FSDP2 CPU offload: costed as optimizer offload");
    if (const auto compile = boolean("training.compile"))
        m_d.set("training.framework", *compile ? "torchtitan-compile" : "torchtitan", "training.compile",
            *compile ? "true" : "false");
}

void TitanReader::recompute_and_compile()
{
    if (const auto mode = string("activation_checkpoint.mode")) {
        if (*mode != "none" && *mode != "selective" && *mode != "full")
            throw InputError(m_d.report.file, "activation_checkpoint.mode",
                "must be none, selective or full, found \"" + *mode + "\"");
        m_d.set("strategy.recompute", *mode, "activation_checkpoint.mode", *mode);
    }
    if (const toml::node* option = take("activation_checkpoint.selective_ac_option")) {
        const std::string v = text_of(*option);
        if (v == "op")
            m_d.report.mapped("activation_checkpoint.selective_ac_option", v, "strategy.recompute",
                "op-level SAC (torchtitan's selective policy)");
        else
            m_d.report.not_modelled("activation_checkpoint.selective_ac_option", v,
                "checkpointing every n-th layer is costed as op-level selective recompute");
    }
    if (const auto enable = boolean("compile.enable"))
        m_d.set("training.framework", *enable ? "torchtitan-compile" : "torchtitan", "compile.enable",
            *enable ? "true" : "false");
    if (!m_d.has("training.framework")) {
        m_d.put("training.framework", "torchtitan");
        m_d.report.assumed("training.framework", "torchtitan", "a torchtitan job config without [compile] enable");
    }
    if (const auto name = string("optimizer.name")) {
        const std::string n = lower(*name);
        if (n == "adamw" || n == "adam")
            m_d.set("strategy.optimizer", "adam", "optimizer.name", *name);
        else
            m_d.report.not_modelled("optimizer.name", *name, "costed as AdamW");
    }
    if (const auto early = boolean("optimizer.early_step_in_backward"))
        m_d.set("strategy.gradient_release", *early, "optimizer.early_step_in_backward", *early ? "true" : "false");
}

// [float8] (older configs) or [quantize.linear.float8]: the scaling recipe and fp8 all-gathers.
void TitanReader::float8()
{
    const bool on = m_d.get("training.precision") && *m_d.get("training.precision") == "fp8";
    for (const std::string table : { "float8.", "quantize.linear.float8." }) {
        if (const auto recipe = string(table + "recipe_name")) {
            if (on && (*recipe == "rowwise" || *recipe == "tensorwise"))
                m_d.set("training.fp8_scaling", *recipe, table + "recipe_name", *recipe);
            else
                m_d.report.no_effect(
                    table + "recipe_name", *recipe, on ? "costed as tensor-wise" : "float8 is not enabled");
        }
        if (const auto gather = boolean(table + "enable_fsdp_float8_all_gather")) {
            if (*gather && on)
                m_d.report.not_modelled(
                    table + "enable_fsdp_float8_all_gather", "true", "FSDP all-gathers are costed in bf16");
            else
                m_d.report.no_effect(table + "enable_fsdp_float8_all_gather", *gather ? "true" : "false",
                    on ? "" : "float8 is not enabled");
        }
        for (const char* key :
            { "precompute_float8_dynamic_scale_for_fsdp", "filter_fqns", "force_recompute_fp8_weight_in_bwd" })
            if (const toml::node* n = take(table + key))
                m_d.report.no_effect(table + key, text_of(*n), on ? "" : "float8 is not enabled");
    }
}

// Keys no step above read: tables without effect, then the unknown.
void TitanReader::remaining()
{
    static const std::string_view kNoEffectKeys[] = { "model.hf_assets_path", "model.tokenizer_path",
        "model.print_after_conversion", "optimizer.lr", "optimizer.eps", "optimizer.weight_decay", "optimizer.beta1",
        "optimizer.beta2", "optimizer.implementation", "training.max_norm", "training.steps", "training.dataset",
        "training.dataset_path", "training.warmup_steps", "training.seed", "training.deterministic", "training.gc_freq",
        "training.gc_debug", "compile.components", "compile.backend", "parallelism.pipeline_parallel_split_points",
        "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns", "activation_checkpoint.early_stop" };
    for (const auto& [key, node] : m_leaves) {
        const std::string table = key.substr(0, key.find('.'));
        const bool inert_table
            = std::find(std::begin(kNoEffectTables), std::end(kNoEffectTables), table) != std::end(kNoEffectTables);
        if (key == "parallelism.pipeline_parallel_split_points")
            m_d.report.not_modelled(key, text_of(*node), "explicit split points: layers are spread evenly");
        else if (inert_table
            || std::find(std::begin(kNoEffectKeys), std::end(kNoEffectKeys), key) != std::end(kNoEffectKeys))
            m_d.report.no_effect(key, text_of(*node));
        else
            m_d.report.not_modelled(key, text_of(*node), "not known to the importer");
    }
    m_leaves.clear();
}

void TitanReader::run()
{
    model();
    degrees();
    schedule();
    training();
    recompute_and_compile();
    float8();
    remaining();
}

} // namespace

bool looks_like_torchtitan_toml(const std::string& text)
{
    return text.find("[parallelism]") != std::string::npos
        || (text.find("[model]") != std::string::npos && text.find("flavor") != std::string::npos);
}

ImportDraft read_torchtitan_toml(const std::string& text, const std::string& file)
{
    toml::table root;
    try {
        root = toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        throw InputError(file, "line " + std::to_string(e.source().begin.line), std::string(e.description()));
    }
    ImportDraft d;
    d.report.format = "torchtitan-toml";
    d.report.file = file;
    std::vector<Leaf> leaves;
    flatten(root, "", leaves);
    std::map<std::string, const toml::node*> by_key;
    for (const Leaf& l : leaves)
        by_key[l.key] = l.node;
    TitanReader(d, std::move(by_key)).run();
    return d;
}

} // namespace parallax
