#include "io/import/deepspeed_json.hpp"

#include "spec/input_error.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

namespace parallax {

using nlohmann::json;

namespace {

// Sections and keys that do not change the step's time or memory: monitoring, schedules, checkpoints,
// loss scaling, data pipelines.
constexpr std::string_view kNoEffectPrefixes[] = { "scheduler.", "optimizer.params.", "tensorboard.", "wandb.",
    "csv_monitor.", "comet.", "flops_profiler.", "comms_logger.", "data_efficiency.", "curriculum_learning.",
    "checkpoint.", "fp16.loss_scale", "fp16.initial_scale_power", "fp16.loss_scale_window", "fp16.hysteresis",
    "fp16.min_loss_scale", "fp16.consecutive_hysteresis", "fp16.auto_cast", "bf16.immediate_grad_update",
    "gradient_clipping", "steps_per_print", "wall_clock_breakdown", "dump_state", "prescale_gradients",
    "gradient_predivide_factor", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
    "zero_optimization.stage3_gather_16bit_weights_on_model_save",
    "zero_optimization.gather_16bit_weights_on_model_save", "zero_optimization.load_from_fp32_weights",
    "zero_optimization.ignore_unused_parameters", "memory_breakdown",
    "zero_optimization.stage3_gather_fp16_weights_on_model_save", "seed", "elasticity." };

struct Reason {
    std::string_view prefix;
    std::string_view why;
};
constexpr Reason kNotModelled[] = {
    { "zero_optimization.reduce_bucket_size", "bucket sizes are not modelled" },
    { "zero_optimization.allgather_bucket_size", "bucket sizes are not modelled" },
    { "zero_optimization.stage3_prefetch_bucket_size", "ZeRO-3 prefetching is costed as full overlap" },
    { "zero_optimization.stage3_param_persistence_threshold", "small parameters are sharded like the rest" },
    { "zero_optimization.stage3_max_live_parameters", "ZeRO-3's live-parameter cap is not modelled" },
    { "zero_optimization.stage3_max_reuse_distance", "ZeRO-3's parameter reuse is not modelled" },
    { "zero_optimization.sub_group_size", "the optimizer's sub-groups are not modelled" },
    { "zero_optimization.contiguous_gradients", "gradient buffer layout" },
    { "zero_optimization.reduce_scatter", "costed as reduce-scatter" },
    { "zero_optimization.allgather_partitions", "costed as all-gather" },
    { "zero_optimization.round_robin_gradients", "gradient placement across ranks" },
    { "zero_optimization.offload_param.", "pinned buffers and prefetch sizes are not modelled" },
    { "zero_optimization.zero_hpz_partition_size", "ZeRO++ hierarchical partitioning" },
    { "zero_optimization.zero_quantized_weights", "ZeRO++ quantized weights" },
    { "zero_optimization.zero_quantized_gradients", "ZeRO++ quantized gradients" },
    { "zero_optimization.offload_optimizer.", "pinned buffers and partial offload are not modelled" },
    { "communication_data_type", "collectives run at the precision Parallax assumes" },
    { "amp.", "Apex AMP is not modelled" },
    { "sparse_attention.", "sparse attention is not modelled" },
    { "compression_training.", "compression is not modelled" },
    { "fp16.fp16_master_weights_and_grads", "fp32 master weights are assumed" },
};

bool has_prefix(std::string_view key, std::string_view prefix)
{
    return key.substr(0, prefix.size()) == prefix;
}

std::string text_of(const json& v)
{
    return v.is_string() ? v.get<std::string>() : v.dump();
}

void flatten(const json& j, const std::string& prefix, std::map<std::string, const json*>& out)
{
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object() && !it->empty())
            flatten(*it, key, out);
        else
            out[key] = &*it;
    }
}

class DeepSpeedReader {
public:
    DeepSpeedReader(ImportDraft& d, std::map<std::string, const json*> leaves)
        : m_d(d)
        , m_leaves(std::move(leaves))
    {
    }
    void run();

private:
    const json* take(const std::string& key);
    std::optional<long long> count(const std::string& key);
    void batch();
    void zero();
    void precision();
    void degrees();
    void remaining();

    ImportDraft& m_d;
    std::map<std::string, const json*> m_leaves;
};

const json* DeepSpeedReader::take(const std::string& key)
{
    const auto it = m_leaves.find(key);
    if (it == m_leaves.end())
        return nullptr;
    const json* v = it->second;
    m_leaves.erase(it);
    return v;
}

// A positive integer, or nullopt when absent or "auto" (filled in by the Hugging Face Trainer at run time).
std::optional<long long> DeepSpeedReader::count(const std::string& key)
{
    const json* v = take(key);
    if (!v)
        return std::nullopt;
    if (v->is_string() && v->get<std::string>() == "auto") {
        m_d.report.not_modelled(key, "auto", "filled in when the job starts; the scenario's default is used");
        return std::nullopt;
    }
    if (!v->is_number_integer() || v->get<long long>() < 1)
        throw InputError(m_d.report.file, key, "must be a positive integer or \"auto\", found " + v->dump());
    return v->get<long long>();
}

// train_batch_size = micro-batch x gradient accumulation x data-parallel ranks (DeepSpeed's rule).
void DeepSpeedReader::batch()
{
    const auto global = count("train_batch_size");
    const auto micro = count("train_micro_batch_size_per_gpu");
    const auto accumulation = count("gradient_accumulation_steps");
    if (global)
        m_d.set("training.global_batch", *global, "train_batch_size", std::to_string(*global));
    if (micro)
        m_d.set("strategy.micro_batch", *micro, "train_micro_batch_size_per_gpu", std::to_string(*micro));
    if (global && micro && accumulation) {
        if (*global % (*micro * *accumulation) != 0)
            throw InputError(m_d.report.file, "train_batch_size",
                "must be train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel ranks");
        const long long dp = *global / (*micro * *accumulation);
        m_d.set("strategy.dp", dp, "gradient_accumulation_steps", std::to_string(*accumulation),
            "dp = train_batch_size / (micro-batch x accumulation)");
    } else if (accumulation) {
        m_d.report.mapped("gradient_accumulation_steps", std::to_string(*accumulation),
            micro ? "training.global_batch" : "strategy.micro_batch",
            micro ? "micro-batch x accumulation x data-parallel ranks"
                  : "train_batch_size / (this x data-parallel ranks)");
        if (micro)
            m_d.batch_per_dp_rank = *micro * *accumulation;
        else
            m_d.accumulation_steps = *accumulation;
    }
}

void DeepSpeedReader::zero()
{
    if (const json* stage = take("zero_optimization.stage")) {
        if (!stage->is_number_integer() || stage->get<long long>() < 0 || stage->get<long long>() > 3)
            throw InputError(
                m_d.report.file, "zero_optimization.stage", "must be 0, 1, 2 or 3, found " + stage->dump());
        m_d.set("strategy.zero", stage->get<long long>(), "zero_optimization.stage", stage->dump());
    }
    if (const json* device = take("zero_optimization.offload_optimizer.device")) {
        const std::string v = text_of(*device);
        m_d.set("strategy.offload_optimizer", v == "cpu" || v == "nvme", "zero_optimization.offload_optimizer.device",
            v, v == "nvme" ? "NVMe offload is costed as CPU offload" : "");
    }
    if (const json* device = take("zero_optimization.offload_param.device")) {
        const std::string v = text_of(*device);
        m_d.set("strategy.offload_params", v == "cpu" || v == "nvme", "zero_optimization.offload_param.device", v,
            v == "nvme" ? "NVMe offload is costed as CPU offload" : "");
    }
    if (const json* overlap = take("zero_optimization.overlap_comm"); overlap && overlap->is_boolean())
        m_d.set(
            "strategy.overlap_grad_reduce", overlap->get<bool>(), "zero_optimization.overlap_comm", overlap->dump());
}

void DeepSpeedReader::precision()
{
    const json* bf16 = take("bf16.enabled");
    const json* fp16 = take("fp16.enabled");
    const bool bf16_on = bf16 && *bf16 == true;
    const bool fp16_on = fp16 && *fp16 == true;
    if (bf16)
        m_d.report.mapped("bf16.enabled", bf16->dump(), "training.precision");
    if (fp16)
        m_d.report.mapped("fp16.enabled", fp16->dump(), "training.precision");
    if (bf16_on || fp16_on)
        m_d.put("training.precision", bf16_on ? "bf16" : "fp16");
    else {
        m_d.report.assumed("training.precision", "fp32", "neither bf16 nor fp16 is enabled: DeepSpeed trains in fp32");
        m_d.put("training.precision", "fp32");
    }
    if (const json* fp32_reduce = take("fp32_allreduce"); fp32_reduce && fp32_reduce->is_boolean())
        m_d.set("training.grad_reduce_in_fp32", fp32_reduce->get<bool>(), "fp32_allreduce", fp32_reduce->dump());
    if (const json* type = take("optimizer.type")) {
        const std::string v = text_of(*type);
        if (v == "Adam" || v == "AdamW" || v == "FusedAdam" || v == "CPUAdam")
            m_d.set("strategy.optimizer", "adam", "optimizer.type", v);
        else if (v == "SGD")
            m_d.set("strategy.optimizer", "sgd", "optimizer.type", v);
        else if (v == "Lion")
            m_d.set("strategy.optimizer", "lion", "optimizer.type", v);
        else
            m_d.report.not_modelled("optimizer.type", v, "costed as Adam");
    }
}

// Degrees a DeepSpeed config may hold: AutoTP, Ulysses sequence parallelism, pipeline stages.
void DeepSpeedReader::degrees()
{
    if (const auto tp = count("tensor_parallel.autotp_size"))
        m_d.set("strategy.tp", *tp, "tensor_parallel.autotp_size", std::to_string(*tp));
    if (const auto sp = count("sequence_parallel_size")) {
        m_d.set("strategy.cp", *sp, "sequence_parallel_size", std::to_string(*sp), "DeepSpeed-Ulysses: all-to-all");
        m_d.put("strategy.cp_kind", "all-to-all");
    }
    if (const json* stages = take("pipeline.stages")) {
        if (stages->is_number_integer() && stages->get<long long>() >= 1)
            m_d.set("strategy.pp", stages->get<long long>(), "pipeline.stages", stages->dump());
        else
            m_d.report.not_modelled(
                "pipeline.stages", text_of(*stages), "set by the PipelineModule in the training code");
    }
    if (m_d.get_int("strategy.dp", 0) > 0)
        m_d.total_gpus = m_d.get_int("strategy.dp", 1) * m_d.get_int("strategy.tp", 1) * m_d.get_int("strategy.pp", 1)
            * m_d.get_int("strategy.cp", 1);
}

void DeepSpeedReader::remaining()
{
    for (const auto& leaf : m_leaves) {
        // Named, not a structured binding: clang 14 (the fuzz preset) cannot capture bindings in lambdas.
        const std::string& key = leaf.first;
        const json* value = leaf.second;
        const auto matches = [&](std::string_view prefix) { return has_prefix(key, prefix); };
        if (std::any_of(std::begin(kNoEffectPrefixes), std::end(kNoEffectPrefixes), matches))
            m_d.report.no_effect(key, text_of(*value));
        else if (has_prefix(key, "activation_checkpointing."))
            m_d.report.not_modelled(key, text_of(*value),
                "configures DeepSpeed's checkpointing; whether layers recompute is the model code's choice "
                "(strategy.recompute)");
        else if (const auto it = std::find_if(std::begin(kNotModelled), std::end(kNotModelled),
                     [&](const Reason& r) { return has_prefix(key, r.prefix); });
                 it != std::end(kNotModelled))
            m_d.report.not_modelled(key, text_of(*value), std::string(it->why));
        else
            m_d.report.not_modelled(key, text_of(*value), "not known to the importer");
    }
    m_leaves.clear();
}

void DeepSpeedReader::run()
{
    batch();
    zero();
    precision();
    degrees();
    remaining();
    m_d.put("training.framework", "megatron-deepspeed");
    m_d.report.assumed("training.framework", "megatron-deepspeed", "DeepSpeed's engine (Megatron-DeepSpeed's kernels)");
}

} // namespace

bool looks_like_deepspeed_json(const json& j)
{
    if (!j.is_object())
        return false;
    for (const char* key :
        { "train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "gradient_accumulation_steps" })
        if (j.contains(key))
            return true;
    return false;
}

ImportDraft read_deepspeed_json(const json& config, const std::string& file)
{
    if (!config.is_object())
        throw InputError(file, "", "a DeepSpeed config is a JSON object");
    ImportDraft d;
    d.report.format = "deepspeed-json";
    d.report.file = file;
    d.model_key = "--model";
    d.seq_len_key = "--seq-len";
    std::map<std::string, const json*> leaves;
    flatten(config, "", leaves);
    DeepSpeedReader(d, std::move(leaves)).run();
    return d;
}

} // namespace parallax
