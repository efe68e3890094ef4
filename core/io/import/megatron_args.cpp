#include "io/import/megatron_args.hpp"

#include "io/import/megatron_flags.hpp"
#include "io/import/shell_script.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>

namespace parallax {

using nlohmann::json;

namespace {

struct Arg {
    std::string flag;
    std::vector<std::string> values;
    std::string text() const
    {
        std::string out;
        for (const std::string& v : values)
            out += (out.empty() ? "" : " ") + shell_value_text(v);
        return out;
    }
};

// "--flag value value --flag=value": values are the words up to the next "--" word.
std::vector<Arg> split_flags(const std::vector<std::string>& words, std::vector<std::string>* positional)
{
    std::vector<Arg> args;
    for (const std::string& w : words) {
        if (w.size() > 2 && w[0] == '-' && w[1] == '-') {
            const std::size_t eq = w.find('=');
            args.push_back({ w.substr(0, eq), {} });
            if (eq != std::string::npos)
                args.back().values.push_back(w.substr(eq + 1));
        } else if (!args.empty()) {
            args.back().values.push_back(w);
        } else if (positional) {
            positional->push_back(w);
        }
    }
    return args;
}

bool ends_with(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct LaunchCommand {
    std::vector<std::string> launcher; // the words before the training script
    std::string script; // pretrain_gpt.py
    std::vector<std::string> args; // Megatron's flags
    int line = 0;
};

// The last command that runs a Python script with flags (torchrun ... pretrain_gpt.py --...), or, for a
// bare list of flags, the last command holding Megatron flags.
std::optional<LaunchCommand> find_launch(const ShellRun& run)
{
    for (auto c = run.commands.rbegin(); c != run.commands.rend(); ++c) {
        const auto& w = c->words;
        for (std::size_t k = 0; k < w.size(); ++k) {
            if (!ends_with(w[k], ".py") || k + 1 >= w.size() || w[k + 1].rfind("--", 0) != 0)
                continue;
            return LaunchCommand { { w.begin(), w.begin() + static_cast<long>(k) }, w[k],
                { w.begin() + static_cast<long>(k) + 1, w.end() }, c->line };
        }
    }
    for (auto c = run.commands.rbegin(); c != run.commands.rend(); ++c) {
        const auto& w = c->words;
        const auto first = std::find_if(w.begin(), w.end(), [](const std::string& s) { return s.rfind("--", 0) == 0; });
        const bool megatron = std::any_of(w.begin(), w.end(), [](const std::string& s) {
            return s == "--num-layers" || s == "--tensor-model-parallel-size" || s == "--hidden-size";
        });
        if (megatron)
            return LaunchCommand { { w.begin(), first }, {}, { first, w.end() }, c->line };
    }
    return std::nullopt;
}

// torchrun / python -m torch.distributed.run / deepspeed: the node and GPU counts; every other option of
// the launcher does not affect the prediction.
void read_launcher(const std::vector<std::string>& words, ImportDraft& d)
{
    if (words.empty())
        return;
    const std::string name = std::filesystem::path(words.front()).filename().string();
    for (const Arg& a : split_flags(words, nullptr)) {
        const std::string key = name + " " + a.flag;
        std::string flag = a.flag;
        std::replace(flag.begin(), flag.end(), '_', '-');
        const bool per_node = flag == "--nproc-per-node" || flag == "--num-gpus";
        const bool nodes = flag == "--nnodes" || flag == "--num-nodes";
        if (!per_node && !nodes) {
            d.report.no_effect(key, a.text(), "launcher option");
            continue;
        }
        const std::string v = a.values.empty() ? std::string() : a.values.front();
        if (is_unknown_shell_value(v)) {
            d.report.not_modelled(key, a.text(), "computed when the script runs; --gpus N gives the GPU count");
            continue;
        }
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 1)
            throw InputError(d.report.file, key,
                "must be a positive number of " + std::string(nodes ? "nodes" : "GPUs per node") + ", found \"" + v
                    + "\"");
        (nodes ? d.nodes : d.gpus_per_node) = n;
        d.report.mapped(key, v, nodes ? "cluster.nodes" : "cluster.gpus_per_node");
    }
}

struct IntFlag {
    std::string_view flag;
    std::string_view target;
    long long min;
};

// Flags whose integer value is a scenario key as it is.
constexpr IntFlag kIntFlags[] = {
    { "--tensor-model-parallel-size", "strategy.tp", 1 },
    { "--pipeline-model-parallel-size", "strategy.pp", 1 },
    { "--context-parallel-size", "strategy.cp", 1 },
    { "--expert-model-parallel-size", "strategy.ep", 1 },
    { "--expert-tensor-parallel-size", "strategy.expert_tp", 1 },
    { "--num-virtual-stages-per-pipeline-rank", "strategy.vpp", 1 },
    { "--virtual-pipeline-model-parallel-size", "strategy.vpp", 1 },
    { "--decoder-first-pipeline-num-layers", "strategy.first_stage_layers", 1 },
    { "--decoder-last-pipeline-num-layers", "strategy.last_stage_layers", 1 },
    { "--micro-batch-size", "strategy.micro_batch", 1 },
    { "--global-batch-size", "training.global_batch", 1 },
    { "--seq-length", "training.seq_len", 1 },
    { "--num-layers", "model.layers", 1 },
    { "--hidden-size", "model.hidden", 1 },
    { "--ffn-hidden-size", "model.ffn_hidden", 1 },
    { "--num-attention-heads", "model.heads", 1 },
    { "--num-experts", "model.moe.experts", 1 },
    { "--moe-router-topk", "model.moe.top_k", 1 },
    { "--moe-ffn-hidden-size", "model.moe.expert_ffn_hidden", 1 },
    { "--q-lora-rank", "model.attention.q_lora_rank", 0 },
    { "--kv-lora-rank", "model.attention.kv_lora_rank", 1 },
    { "--qk-head-dim", "model.attention.qk_nope_head_dim", 1 },
    { "--qk-pos-emb-head-dim", "model.attention.qk_rope_head_dim", 0 },
    { "--v-head-dim", "model.attention.v_head_dim", 1 },
    { "--window-attn-skip-freq", "model.full_attention_every", 0 },
};

struct SwitchFlag {
    std::string_view flag;
    std::string_view target;
    std::string_view json_value;
};

// Flags without a value that set a scenario key.
constexpr SwitchFlag kSwitchFlags[] = {
    { "--sequence-parallel", "strategy.sequence_parallel", "true" },
    { "--use-distributed-optimizer", "strategy.zero", "1" },
    { "--overlap-grad-reduce", "strategy.overlap_grad_reduce", "true" },
    { "--overlap-param-gather", "strategy.overlap_param_gather", "true" },
    { "--tp-comm-overlap", "strategy.tp_comm_overlap", "true" },
    { "--overlap-moe-expert-parallel-comm", "strategy.ep_overlap", "true" },
    { "--optimizer-cpu-offload", "strategy.offload_optimizer", "true" },
    { "--use-flash-attn", "training.flash_attention", "true" },
    { "--accumulate-allreduce-grads-in-fp32", "training.grad_reduce_in_fp32", "true" },
    { "--grad-reduce-in-bf16", "training.grad_reduce_in_bf16", "true" },
    { "--moe-enable-deepep", "training.moe_dispatcher", "\"deepep\"" },
    { "--multi-latent-attention", "model.attention.kind", "\"mla\"" },
    { "--recompute-activations", "strategy.recompute", "\"selective\"" },
    { "--swiglu", "model.ffn_act", "\"swiglu\"" },
    { "--untie-embeddings-and-output-weights", "model.tied_embeddings", "false" },
    { "--enable-cuda-graph", "training.cuda_graphs", "\"layers\"" },
    { "--external-cuda-graph", "training.cuda_graphs", "\"layers\"" },
};

constexpr long long kGpt2Vocab = 50257; // GPT-2 BPE (--vocab-file gpt2-vocab.json)
constexpr long long kMegatronVocabDivisor = 128; // --make-vocab-size-divisible-by default
constexpr double kMegatronDefaultDropout = 0.1; // --hidden-dropout / --attention-dropout defaults

class MegatronReader {
public:
    MegatronReader(ImportDraft& d)
        : m_d(d)
    {
    }
    void read(const Arg& a);
    void finish();

private:
    const std::string& file() const { return m_d.report.file; }
    std::string one(const Arg& a) const;
    long long integer(const Arg& a, long long min) const;
    double number(const Arg& a) const;
    bool table_flag(const Arg& a);
    bool parallelism(const Arg& a);
    bool shape(const Arg& a);
    bool moe(const Arg& a);
    bool numerics(const Arg& a);
    bool runtime(const Arg& a);
    bool deepspeed(const Arg& a);
    void finish_shape();
    void finish_attention();
    void finish_vocab();
    void finish_precision();
    void finish_defaults();
    void finish_recompute();

    ImportDraft& m_d;
    std::optional<Arg> m_layers_per_virtual_stage;
    bool m_gqa = false;
    std::optional<Arg> m_query_groups;
    std::optional<Arg> m_kv_channels;
    std::optional<double> m_hidden_dropout;
    std::optional<double> m_attention_dropout;
    std::vector<Arg> m_precision_flags;
    std::optional<Arg> m_vocab_size;
    std::optional<Arg> m_tokenizer_type;
    std::optional<Arg> m_tokenizer_model;
    bool m_gpt2_vocab_file = false;
    long long m_vocab_divisor = kMegatronVocabDivisor;
    std::optional<Arg> m_recompute_method;
    std::optional<Arg> m_recompute_layers;
    std::optional<Arg> m_shared_expert_size;
    std::string m_sharding = "optim_grads_params";
    bool m_fsdp = false;
    bool m_deepspeed = false; // Megatron-DeepSpeed's --deepspeed
    bool m_expert_tp = false; // Megatron-DeepSpeed's --enable-expert-tensor-parallelism
};

std::string MegatronReader::one(const Arg& a) const
{
    if (a.values.size() != 1)
        throw InputError(file(), a.flag, "takes one value, found " + std::to_string(a.values.size()));
    if (is_unknown_shell_value(a.values[0]))
        throw InputError(file(), a.flag,
            "its value (" + shell_value_text(a.values[0])
                + ") is computed when the script runs, which the importer does not do; write the value in the script");
    return a.values[0];
}

long long MegatronReader::integer(const Arg& a, long long min) const
{
    const std::string v = one(a);
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < min)
        throw InputError(file(), a.flag, "must be an integer >= " + std::to_string(min) + ", found \"" + v + "\"");
    return n;
}

double MegatronReader::number(const Arg& a) const
{
    const std::string v = one(a);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
        throw InputError(file(), a.flag, "must be a number, found \"" + v + "\"");
    return x;
}

bool MegatronReader::table_flag(const Arg& a)
{
    for (const IntFlag& f : kIntFlags) {
        if (f.flag == a.flag) {
            m_d.set(f.target, integer(a, f.min), a.flag, a.text());
            return true;
        }
    }
    for (const SwitchFlag& f : kSwitchFlags) {
        if (f.flag == a.flag) {
            if (!a.values.empty())
                throw InputError(file(), a.flag, "takes no value, found \"" + a.text() + "\"");
            m_d.set(f.target, json::parse(f.json_value), a.flag, {});
            return true;
        }
    }
    return false;
}

bool MegatronReader::parallelism(const Arg& a)
{
    if (a.flag == "--num-layers-per-virtual-pipeline-stage") {
        integer(a, 1);
        m_layers_per_virtual_stage = a; // needs the layer count and pp: finish_shape()
    } else if (a.flag == "--use-torch-fsdp2" || a.flag == "--use-megatron-fsdp" || a.flag == "--use-custom-fsdp") {
        m_fsdp = true;
        m_d.report.mapped(
            a.flag, a.text(), "strategy.zero", "fully sharded data parallelism (--data-parallel-sharding-strategy)");
    } else if (a.flag == "--data-parallel-sharding-strategy") {
        m_sharding = one(a);
        m_d.report.mapped(
            a.flag, a.text(), "strategy.zero", "with FSDP: no_shard 0, optim 1, optim_grads 2, optim_grads_params 3");
    } else if (a.flag == "--cp-comm-type") {
        const std::string v = one(a);
        if (v == "p2p" || v == "a2a")
            m_d.set("strategy.cp_kind", v == "p2p" ? "ring" : "all-to-all", a.flag, v);
        else
            m_d.report.not_modelled(a.flag, v, "costed as ring attention (p2p)");
    } else {
        return false;
    }
    return true;
}

bool MegatronReader::shape(const Arg& a)
{
    if (a.flag == "--group-query-attention") {
        m_gqa = true;
        m_d.report.mapped(a.flag, {}, "model.kv_heads", "--num-query-groups K/V heads");
    } else if (a.flag == "--num-query-groups") {
        integer(a, 1);
        m_query_groups = a;
    } else if (a.flag == "--kv-channels") {
        integer(a, 1);
        m_kv_channels = a;
    } else if (a.flag == "--hidden-dropout" || a.flag == "--attention-dropout") {
        (a.flag == "--hidden-dropout" ? m_hidden_dropout : m_attention_dropout) = number(a);
        m_d.report.mapped(a.flag, a.text(), "model.dropout");
    } else if (a.flag == "--position-embedding-type") {
        const std::string v = one(a);
        if (v == "learned_absolute")
            m_d.report.not_modelled(
                a.flag, v, "learned position embeddings (seq_len x hidden parameters) are not costed");
        else
            m_d.report.no_effect(a.flag, v, "rotary or no position embedding: no parameters");
    } else if (a.flag == "--window-size") {
        static const std::regex kWindow(R"(\(?\s*(\d+)\s*(,\s*-?\d+\s*)?\)?)");
        std::smatch m;
        const std::string v = one(a);
        if (!std::regex_match(v, m, kWindow))
            throw InputError(file(), a.flag, "must be \"(left,right)\" or a window size, found \"" + v + "\"");
        m_d.set("model.sliding_window", std::stoll(m[1].str()), a.flag, v, "the left window");
    } else if (a.flag == "--softmax-type") {
        const std::string v = one(a);
        if (v == "learnable")
            m_d.set("model.attention_sinks", true, a.flag, v);
        else if (v == "vanilla")
            m_d.report.no_effect(a.flag, v);
        else
            m_d.report.not_modelled(a.flag, v, "only learnable sinks are modelled");
    } else if (a.flag == "--attention-backend") {
        const std::string v = one(a);
        m_d.set("training.flash_attention", v != "unfused" && v != "local", a.flag, v);
    } else if (a.flag == "--transformer-impl") {
        const std::string v = one(a);
        if (v == "transformer_engine")
            m_d.report.no_effect(a.flag, v, "Transformer Engine is the stack the megatron framework models");
        else
            m_d.report.not_modelled(a.flag, v, "the local (non-TE) layers are costed as Transformer Engine's");
    } else {
        return false;
    }
    return true;
}

bool MegatronReader::moe(const Arg& a)
{
    if (a.flag == "--moe-layer-freq") {
        static const std::regex kPattern(R"(\(?\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\)?)");
        std::smatch m;
        const std::string v = one(a);
        if (v.find_first_not_of("0123456789") == std::string::npos)
            m_d.set("model.moe.moe_layer_freq", integer(a, 1), a.flag, v);
        else if (std::regex_match(v, m, kPattern)) {
            m_d.set("model.moe.first_dense_layers", std::stoll(m[1].str()), a.flag, v, "the leading dense layers");
            m_d.put("model.moe.moe_layer_freq", 1);
        } else
            m_d.report.not_modelled(a.flag, v, "a layer pattern other than dense-first then every layer MoE");
    } else if (a.flag == "--moe-expert-capacity-factor") {
        m_d.set("model.moe.capacity_factor", number(a), a.flag, a.text());
    } else if (a.flag == "--moe-shared-expert-intermediate-size") {
        integer(a, 1);
        m_shared_expert_size = a;
    } else if (a.flag == "--moe-token-dispatcher-type" || a.flag == "--moe-flex-dispatcher-backend") {
        const std::string v = one(a);
        if (v == "alltoall")
            m_d.set("training.moe_dispatcher", "all-to-all", a.flag, v);
        else if (v == "deepep" || v == "hybridep")
            m_d.set("training.moe_dispatcher", "deepep", a.flag, v);
        else if (v == "flex")
            m_d.report.mapped(
                a.flag, v, "training.moe_dispatcher", "the backend (--moe-flex-dispatcher-backend) decides");
        else
            m_d.report.not_modelled(a.flag, v, "costed as an all-to-all dispatcher");
    } else if (a.flag == "--moe-shared-expert-overlap") {
        m_d.report.not_modelled(a.flag, {}, "the shared expert's overlap with the dispatch");
    } else {
        return false;
    }
    return true;
}

bool MegatronReader::numerics(const Arg& a)
{
    if (a.flag == "--bf16" || a.flag == "--fp16" || a.flag == "--fp8-format" || a.flag == "--fp4-format") {
        m_precision_flags.push_back(a); // the matmuls' precision is decided in finish_precision()
    } else if (a.flag == "--fp8-recipe") {
        // Megatron-LM's recipes are training.fp8_scaling's names (arguments.py --fp8-recipe choices).
        const std::string v = one(a);
        if (v == "delayed" || v == "tensorwise" || v == "mxfp8" || v == "blockwise")
            m_d.set("training.fp8_scaling", v, a.flag, v);
        else
            m_d.report.not_modelled(a.flag, v, "costed as tensor-wise fp8 scaling");
    } else if (a.flag == "--vocab-size") {
        integer(a, 1);
        m_vocab_size = a;
    } else if (a.flag == "--tokenizer-type") {
        one(a);
        m_tokenizer_type = a;
    } else if (a.flag == "--tokenizer-model") {
        m_tokenizer_model = a;
    } else if (a.flag == "--vocab-file") {
        m_gpt2_vocab_file = true;
        m_d.report.mapped(a.flag, a.text(), "model.vocab", "a GPT-2 BPE vocabulary file");
    } else if (a.flag == "--make-vocab-size-divisible-by") {
        m_vocab_divisor = integer(a, 1);
        m_d.report.mapped(a.flag, a.text(), "model.vocab", "the vocabulary is padded to a multiple of it x TP");
    } else {
        return false;
    }
    return true;
}

bool MegatronReader::runtime(const Arg& a)
{
    if (a.flag == "--recompute-granularity") {
        const std::string v = one(a);
        if (v != "full" && v != "selective")
            throw InputError(file(), a.flag, "must be full or selective, found \"" + v + "\"");
        m_d.set("strategy.recompute", v, a.flag, v);
    } else if (a.flag == "--recompute-modules") {
        // Megatron-LM: nargs '*', the submodules selective recomputation re-runs.
        nlohmann::json modules = nlohmann::json::array();
        for (const std::string& v : a.values) {
            RecomputeModule m {};
            if (!recompute_module_from_string(v, m))
                throw InputError(file(), a.flag, "names an unknown module \"" + v + "\"");
            modules.push_back(v);
        }
        m_d.set("strategy.recompute_modules", modules, a.flag, a.text());
    } else if (a.flag == "--recompute-method") {
        one(a);
        m_recompute_method = a;
    } else if (a.flag == "--recompute-num-layers") {
        integer(a, 0);
        m_recompute_layers = a;
    } else if (a.flag == "--optimizer") {
        const std::string v = one(a);
        if (v == "adam" || v == "sgd")
            m_d.set("strategy.optimizer", v, a.flag, v);
        else
            m_d.report.not_modelled(a.flag, v, "costed as Adam");
    } else if (a.flag == "--cuda-graph-scope" || a.flag == "--cuda-graph-impl") {
        const std::string v = one(a);
        if (v == "full_iteration")
            m_d.set("training.cuda_graphs", "full-iteration", a.flag, v);
        else if (v == "none")
            m_d.set("training.cuda_graphs", "none", a.flag, v);
        else
            m_d.set("training.cuda_graphs", "layers", a.flag, v, "per-layer graphs");
    } else {
        return false;
    }
    return true;
}

// Megatron-DeepSpeed's own flags (megatron/arguments.py of microsoft/Megatron-DeepSpeed): the same
// pretrain_gpt.py command line, with DeepSpeed's ZeRO, activation checkpointing, Ulysses and MoE groups.
bool MegatronReader::deepspeed(const Arg& a)
{
    if (a.flag == "--deepspeed") {
        m_deepspeed = true;
        m_d.set("training.framework", "megatron-deepspeed", a.flag, a.text());
    } else if (a.flag == "--zero-stage") {
        m_d.set("strategy.zero", integer(a, 0), a.flag, a.text());
    } else if (a.flag == "--checkpoint-activations") {
        m_d.set("strategy.recompute", "full", a.flag, a.text());
    } else if (a.flag == "--ds-sequence-parallel-size") {
        m_d.set("strategy.cp", integer(a, 1), a.flag, a.text());
        m_d.put("strategy.cp_kind", "all-to-all");
        m_d.report.mapped(a.flag, a.text(), "strategy.cp_kind", "DeepSpeed-Ulysses: the all-to-all kind");
    } else if (a.flag == "--moe-expert-parallel-size") {
        m_d.set("strategy.ep", integer(a, 1), a.flag, a.text());
    } else if (a.flag == "--enable-expert-tensor-parallelism") {
        m_expert_tp = true;
        m_d.report.mapped(a.flag, a.text(), "strategy.expert_tp", "experts split like the dense layers (= tp)");
    } else if (a.flag == "--enable-zbh1-pipeline") {
        m_d.set("strategy.schedule", "zb-h1", a.flag, a.text());
    } else if (a.flag == "--num-key-value-heads") {
        m_d.set("model.kv_heads", integer(a, 1), a.flag, a.text());
    } else if (a.flag == "--use-flash-attn-v2") {
        m_d.set("training.attention_kernel", "flash2", a.flag, a.text());
    } else if (a.flag == "--deepspeed-activation-checkpointing" || a.flag == "--create-moe-param-group"
        || a.flag == "--no-pipeline-parallel" || a.flag == "--deepspeed_config" || a.flag == "--deepspeed-config") {
        m_d.report.no_effect(a.flag, a.text(),
            a.flag.rfind("--deepspeed", 0) == 0 && a.flag != "--deepspeed-activation-checkpointing"
                ? "the plan is on the command line (--zero-stage ...); import the JSON on its own to read it"
                : "implied by the other flags");
    } else {
        return false;
    }
    return true;
}

void MegatronReader::read(const Arg& a)
{
    if (table_flag(a) || parallelism(a) || shape(a) || moe(a) || numerics(a) || runtime(a) || deepspeed(a))
        return;
    if (megatron_flag_has_no_effect(a.flag))
        m_d.report.no_effect(a.flag, a.text());
    else if (const auto why = megatron_flag_not_modelled(a.flag))
        m_d.report.not_modelled(a.flag, a.text(), *why);
    else
        m_d.report.not_modelled(a.flag, a.text(), "not known to the importer");
}

// Derived model values and Megatron-LM's defaults for what the command line leaves out.
void MegatronReader::finish_shape()
{
    ImportDraft& d = m_d;
    const long long hidden = d.get_int("model.hidden", 0);
    const long long heads = d.get_int("model.heads", 0);
    if (!d.has("model.ffn_hidden") && hidden > 0) {
        const bool swiglu = d.has("model.ffn_act");
        // megatron/training/arguments.py: 4h, or int(4h * 2/3 / 64) * 64 with --swiglu
        const long long ffn = swiglu ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
        d.put("model.ffn_hidden", ffn);
        d.report.assumed("model.ffn_hidden", std::to_string(ffn),
            swiglu ? "no --ffn-hidden-size: Megatron-LM's int(4h x 2/3 / 64) x 64 for SwiGLU"
                   : "no --ffn-hidden-size: 4h");
    }
    if (m_gqa) {
        const long long groups = m_query_groups ? integer(*m_query_groups, 1) : 1;
        d.set("model.kv_heads", groups, "--num-query-groups", m_query_groups ? m_query_groups->text() : "1 (default)");
    } else if (m_query_groups) {
        d.report.no_effect("--num-query-groups", m_query_groups->text(), "ignored without --group-query-attention");
    }
    if (m_kv_channels) {
        const long long kc = integer(*m_kv_channels, 1);
        if (heads > 0 && kc * heads != hidden)
            d.set("model.head_dim", kc, "--kv-channels", m_kv_channels->text(),
                "heads x kv-channels differs from hidden");
        else
            d.report.mapped("--kv-channels", m_kv_channels->text(), "model.head_dim", "= hidden / heads");
    }
    if (!d.has("model.layers"))
        return;
    const double hd = m_hidden_dropout.value_or(kMegatronDefaultDropout);
    const double ad = m_attention_dropout.value_or(kMegatronDefaultDropout);
    d.put("model.dropout", hd > 0 || ad > 0);
    if (!m_hidden_dropout || !m_attention_dropout)
        d.report.assumed("model.dropout", hd > 0 || ad > 0 ? "true" : "false",
            "Megatron-LM's default --hidden-dropout / --attention-dropout is 0.1");
    if (!d.has("model.tied_embeddings")) {
        d.put("model.tied_embeddings", true);
        d.report.assumed(
            "model.tied_embeddings", "true", "Megatron-LM ties them without --untie-embeddings-and-output-weights");
    }
    if (!d.has("model.ffn_act"))
        d.report.assumed("model.ffn_act", "gelu", "no --swiglu");
}

void MegatronReader::finish_attention()
{
    ImportDraft& d = m_d;
    if (d.has("model.moe.experts")) {
        if (!d.has("model.moe.expert_ffn_hidden")) {
            d.put("model.moe.expert_ffn_hidden", d.get_int("model.ffn_hidden", 1));
            d.report.assumed("model.moe.expert_ffn_hidden", std::to_string(d.get_int("model.ffn_hidden", 1)),
                "no --moe-ffn-hidden-size: the experts have --ffn-hidden-size");
        }
        if (!d.has("model.moe.top_k")) {
            d.put("model.moe.top_k", 2);
            d.report.assumed("model.moe.top_k", "2", "Megatron-LM's default --moe-router-topk");
        }
        if (m_shared_expert_size) {
            const long long width = d.get_int("model.moe.expert_ffn_hidden", 1);
            d.set("model.moe.shared_experts", integer(*m_shared_expert_size, 1) / width,
                "--moe-shared-expert-intermediate-size", m_shared_expert_size->text(), "in units of the expert width");
        }
    } else if (m_shared_expert_size) {
        d.report.no_effect("--moe-shared-expert-intermediate-size", m_shared_expert_size->text(), "no experts");
    }
    if (d.has("model.attention.kind")) {
        // megatron/training/arguments.py defaults of the MLA flags
        static const std::pair<const char*, int> kDefaults[] = { { "q_lora_rank", 0 }, { "kv_lora_rank", 32 },
            { "qk_nope_head_dim", 128 }, { "qk_rope_head_dim", 64 }, { "v_head_dim", 128 } };
        for (const auto& [key, value] : kDefaults) {
            const std::string target = std::string("model.attention.") + key;
            if (!d.has(target)) {
                d.put(target, value);
                d.report.assumed(target, std::to_string(value), "Megatron-LM's default for multi-latent attention");
            }
        }
    }
}

void MegatronReader::finish_vocab()
{
    ImportDraft& d = m_d;
    d.vocab_pad_multiple = static_cast<int>(m_vocab_divisor);
    d.vocab_key = m_tokenizer_model ? "--tokenizer-model" : "--vocab-size";
    const std::optional<long long> known
        = m_tokenizer_model ? known_tokenizer_vocab(m_tokenizer_model->text()) : std::nullopt;
    const bool gpt2 = m_gpt2_vocab_file || (m_tokenizer_type && m_tokenizer_type->text() == "GPT2BPETokenizer");
    if (m_vocab_size)
        d.set("model.vocab", integer(*m_vocab_size, 1), "--vocab-size", m_vocab_size->text());
    else if (known)
        d.set("model.vocab", *known, "--tokenizer-model", m_tokenizer_model->text(), "that tokenizer's vocabulary");
    else if (gpt2)
        d.put("model.vocab", kGpt2Vocab);
    if (m_tokenizer_type)
        d.report.no_effect("--tokenizer-type", m_tokenizer_type->text(),
            gpt2 && !m_vocab_size ? "GPT-2 BPE: 50257 tokens" : "the vocabulary size is what matters");
    if (m_tokenizer_model && (m_vocab_size || !known))
        d.report.no_effect("--tokenizer-model", m_tokenizer_model->text(),
            m_vocab_size ? "--vocab-size gives the vocabulary" : "a tokenizer the importer does not know the size of");
}

void MegatronReader::finish_precision()
{
    ImportDraft& d = m_d;
    std::string precision;
    for (const char* flag : { "--fp4-format", "--fp8-format", "--fp16", "--bf16" })
        for (const Arg& a : m_precision_flags)
            if (precision.empty() && a.flag == flag)
                precision = a.flag == std::string("--fp4-format") ? "fp4"
                    : a.flag == std::string("--fp8-format")       ? "fp8"
                                                                  : a.flag.substr(2);
    for (const Arg& a : m_precision_flags) {
        const bool decisive = (precision == "fp4" && a.flag == "--fp4-format")
            || (precision == "fp8" && a.flag == "--fp8-format") || a.flag == "--" + precision;
        d.report.mapped(a.flag, a.text(), "training.precision",
            decisive ? std::string()
                     : "the matmuls run in " + precision + "; this sets the master and activation types");
    }
    if (precision.empty()) {
        d.report.assumed("training.precision", "fp32", "neither --bf16 nor --fp16: Megatron-LM trains in fp32");
        precision = "fp32";
    }
    d.put("training.precision", precision);
}

void MegatronReader::finish_defaults()
{
    ImportDraft& d = m_d;
    if (m_deepspeed) {
        // DeepSpeed's MoE layers keep whole experts on a rank unless told otherwise (moe/layer.py
        // enable_expert_tensor_parallelism=False).
        if (d.has("model.moe.experts") && !m_expert_tp && !d.has("strategy.expert_tp")) {
            d.put("strategy.expert_tp", 1);
            d.report.assumed(
                "strategy.expert_tp", "1", "DeepSpeed's default without --enable-expert-tensor-parallelism");
        }
    } else {
        d.put("training.framework", "megatron");
        d.report.assumed("training.framework", "megatron", "a Megatron-LM command line (Transformer Engine layers)");
    }
    for (const auto& [key, flag] : { std::pair { "overlap_grad_reduce", "--overlap-grad-reduce" },
             std::pair { "overlap_param_gather", "--overlap-param-gather" } }) {
        const std::string target = std::string("strategy.") + key;
        if (!d.has(target)) {
            d.put(target, false);
            d.report.assumed(target, "false", std::string("Megatron-LM's default without ") + flag);
        }
    }
    if (m_fsdp) {
        const int zero = m_sharding == "no_shard" ? 0 : m_sharding == "optim" ? 1 : m_sharding == "optim_grads" ? 2 : 3;
        d.put("strategy.zero", zero);
    }
    if (m_layers_per_virtual_stage) {
        const long long per = integer(*m_layers_per_virtual_stage, 1);
        const long long layers = d.get_int("model.layers", 0);
        const long long pp = d.get_int("strategy.pp", 1);
        if (layers == 0) {
            d.report.not_modelled("--num-layers-per-virtual-pipeline-stage", m_layers_per_virtual_stage->text(),
                "needs --num-layers in the same command line");
            return;
        }
        if (layers % (pp * per) != 0)
            throw InputError(file(), "--num-layers-per-virtual-pipeline-stage",
                "pp (" + std::to_string(pp) + ") x " + std::to_string(per) + " layers must divide --num-layers ("
                    + std::to_string(layers) + ")");
        d.set("strategy.vpp", layers / (pp * per), "--num-layers-per-virtual-pipeline-stage",
            m_layers_per_virtual_stage->text(), "--num-layers / (pp x this)");
    }
}

// --recompute-method / --recompute-num-layers: "uniform" recomputes every layer (in groups), "block" only
// the first N layers of each pipeline chunk, which Parallax's full recompute does not express.
void MegatronReader::finish_recompute()
{
    ImportDraft& d = m_d;
    const json* granularity = d.get("strategy.recompute");
    const bool full = granularity && *granularity == "full";
    for (const std::optional<Arg>* a : { &m_recompute_method, &m_recompute_layers }) {
        if (!*a)
            continue;
        if (!full) {
            d.report.no_effect((*a)->flag, (*a)->text(), "applies to --recompute-granularity full only");
            continue;
        }
        const bool block = m_recompute_method && m_recompute_method->text() == "block";
        const long long layers = d.get_int("model.layers", 0);
        const long long chunk = layers / std::max(1LL, d.get_int("strategy.pp", 1) * d.get_int("strategy.vpp", 1));
        const long long n = m_recompute_layers ? integer(*m_recompute_layers, 0) : 0;
        if (block && n < chunk)
            d.report.not_modelled((*a)->flag, (*a)->text(),
                "only " + std::to_string(n) + " of each chunk's " + std::to_string(chunk)
                    + " layers are recomputed; Parallax's full recompute recomputes all");
        else
            d.report.mapped((*a)->flag, (*a)->text(), "strategy.recompute", "every layer is recomputed");
    }
}

void MegatronReader::finish()
{
    finish_shape();
    finish_attention();
    finish_vocab();
    finish_precision();
    finish_defaults();
    finish_recompute();
}

std::string model_name_from(const std::string& file)
{
    const std::string stem = std::filesystem::path(file).stem().string();
    return stem.empty() || stem == "-" ? std::string("megatron-model") : stem;
}

} // namespace

bool looks_like_megatron_args(const std::string& text)
{
    for (const char* flag : { "--tensor-model-parallel-size", "--num-layers", "--micro-batch-size", "pretrain_gpt.py",
             "--pipeline-model-parallel-size", "--seq-length" })
        if (text.find(flag) != std::string::npos)
            return true;
    return false;
}

ImportDraft read_megatron_args(const std::string& text, const std::string& file)
{
    ImportDraft d;
    d.report.format = "megatron-args";
    d.report.file = file;
    d.model_key = "--num-layers";
    d.seq_len_key = "--seq-length";
    const ShellRun run = run_shell_script(text);
    const auto launch = find_launch(run);
    if (!launch)
        throw InputError(file, "",
            "no Megatron-LM launch command found (a command running pretrain_*.py with flags, or a list of "
            "Megatron flags such as --num-layers)");
    for (const std::string& note : run.notes)
        d.report.not_modelled("script", {}, note);
    read_launcher(launch->launcher, d);
    if (!launch->script.empty())
        d.report.no_effect(launch->script, {}, "the training script (line " + std::to_string(launch->line) + ")");
    std::vector<std::string> positional;
    MegatronReader reader(d);
    for (const Arg& a : split_flags(launch->args, &positional))
        reader.read(a);
    for (const std::string& p : positional)
        d.report.not_modelled(p, {}, "a positional argument of the training script");
    reader.finish();
    if (d.has("model.layers"))
        d.put("model.name", model_name_from(file));
    return d;
}

} // namespace parallax
