// NeMo's Megatron-Bridge ConfigContainer as YAML overrides (Megatron-Bridge main of 2026-08:
// src/megatron/bridge/training/config.py, mixed_precision.py recipe names).
#include "io/export/launch_config.hpp"
#include "io/export/launch_plan.hpp"
#include "io/export/launch_text.hpp"

#include <sstream>

namespace parallax {

namespace {

using launch_plan::data_sharded;
using launch_plan::etp_of;
using launch_plan::every_layer_moe;
using launch_plan::megatron_split;
using launch_plan::MegatronSplit;
using launch_text::boolean;
using launch_text::comment_lines;
using launch_text::decimal;
using launch_text::num;
using launch_text::yaml_string;

struct Yaml {
    std::ostringstream out;
    void section(const std::string& name) { out << "\n" << name << ":\n"; }
    void kv(const std::string& k, const std::string& v) { out << "  " << k << ": " << v << "\n"; }
    void kv(const std::string& k, long long v) { kv(k, num(v)); }
};

void write_header(Yaml& y, const Scenario& sc, const LaunchSettings& o, const std::vector<std::string>& notes)
{
    y.out << comment_lines("NeMo / Megatron-Bridge overrides written by Parallax"
        + (o.run_label.empty() ? std::string() : " for " + o.run_label) + ".");
    y.out << comment_lines("Plan: " + plan_summary(sc));
    y.out << "# The ConfigContainer's sections (megatron.bridge.training.config): merge it over a GPT pretraining "
             "recipe\n# (OmegaConf.merge, as Megatron-Bridge's example scripts do with --config-file), e.g.\n"
             "#   python examples/.../pretrain_<model>.py --config-file THIS_FILE\n"
             "# model: holds the whole architecture, so any GPT recipe becomes this model.\n";
    for (const auto& n : notes)
        y.out << comment_lines("NOTE: " + n);
}

void write_model_shape(Yaml& y, const ModelSpec& m, const TrainingSpec& t)
{
    y.section("model");
    y.kv("num_layers", m.layers);
    y.kv("hidden_size", m.hidden);
    y.kv("ffn_hidden_size", m.ffn_hidden);
    y.kv("num_attention_heads", m.heads);
    if (!m.mla)
        y.kv("num_query_groups", m.kv_heads);
    if (m.head_dim_override && !m.mla)
        y.kv("kv_channels", *m.head_dim_override);
    y.kv("vocab_size", m.vocab);
    y.kv("seq_length", t.seq_len);
    if (m.ffn_act == FfnActivation::swiglu) {
        y.kv("normalization", "RMSNorm");
        y.kv("gated_linear_unit", "true");
        y.kv("position_embedding_type", "rope");
        y.kv("add_bias_linear", "false");
    }
    y.kv("share_embeddings_and_output_weights", boolean(m.tied_embeddings));
    if (!m.has_dropout()) {
        y.kv("attention_dropout", "0.0");
        y.kv("hidden_dropout", "0.0");
    }
    if (m.mla) {
        y.kv("multi_latent_attention", "true");
        if (m.mla->q_lora_rank > 0)
            y.kv("q_lora_rank", m.mla->q_lora_rank);
        y.kv("kv_lora_rank", m.mla->kv_lora_rank);
        y.kv("qk_head_dim", m.mla->qk_nope_head_dim);
        y.kv("qk_pos_emb_head_dim", m.mla->qk_rope_head_dim);
        y.kv("v_head_dim", m.mla->v_head_dim);
    }
    if (m.sliding_window > 0) {
        y.kv("window_size", "[" + num(m.sliding_window) + ", 0]");
        if (m.full_attention_every > 0)
            y.kv("window_attn_skip_freq", m.full_attention_every);
    }
    if (m.attention_sinks)
        y.kv("softmax_type", "learnable");
}

void write_moe(Yaml& y, const ModelSpec& m, const TrainingSpec& t)
{
    y.kv("num_moe_experts", m.moe->experts);
    y.kv("moe_router_topk", m.moe->top_k);
    y.kv("moe_ffn_hidden_size", m.moe->expert_ffn_hidden);
    y.kv("moe_grouped_gemm", "true");
    if (t.moe_dispatcher == MoeDispatcher::deepep) {
        y.kv("moe_token_dispatcher_type", "flex");
        y.kv("moe_flex_dispatcher_backend", "deepep");
    } else {
        y.kv("moe_token_dispatcher_type", "alltoall");
    }
    if (m.moe->shared_experts > 0)
        y.kv("moe_shared_expert_intermediate_size", m.moe->shared_experts * m.moe->expert_ffn_hidden);
    if (m.moe->capacity_factor)
        y.kv("moe_expert_capacity_factor", decimal(*m.moe->capacity_factor));
    if (!every_layer_moe(m)) {
        std::string list;
        for (int l = 0; l < m.layers; ++l)
            list += (l ? ", " : "") + num(m.is_moe_layer(l) ? 1 : 0);
        y.kv("moe_layer_freq", "[" + list + "]");
    }
}

void write_parallelism(Yaml& y, const Scenario& sc)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    y.kv("tensor_model_parallel_size", st.tp);
    y.kv("pipeline_model_parallel_size", st.pp);
    const MegatronSplit split = megatron_split(sc);
    if (!split.layout.empty()) {
        y.kv("pipeline_model_parallel_layout", yaml_string(split.layout));
    } else {
        y.kv("virtual_pipeline_model_parallel_size", st.vpp > 1 ? num(st.vpp) : std::string("null"));
        if (split.first > 0)
            y.kv("num_layers_in_first_pipeline_stage", split.first);
        if (split.last > 0)
            y.kv("num_layers_in_last_pipeline_stage", split.last);
    }
    y.kv("context_parallel_size", st.cp);
    if (st.cp > 1)
        y.kv("cp_comm_type", st.cp_kind == CpKind::ring ? "p2p" : "a2a");
    if (m.is_moe()) {
        y.kv("expert_model_parallel_size", st.ep);
        y.kv("expert_tensor_parallel_size", etp_of(st));
    }
    y.kv("sequence_parallel", boolean(st.sequence_parallel && st.tp > 1));
}

void write_recompute_and_graphs(Yaml& y, const Strategy& st, const TrainingSpec& t)
{
    if (st.recompute == Recompute::selective) {
        y.kv("recompute_granularity", "selective");
    } else if (st.recompute == Recompute::full) {
        y.kv("recompute_granularity", "full");
        y.kv("recompute_method", "uniform");
        y.kv("recompute_num_layers", 1);
    } else {
        y.kv("recompute_granularity", "null");
    }
    if (t.cuda_graphs != CudaGraphs::none)
        y.kv("cuda_graph_impl", t.cuda_graphs == CudaGraphs::layers ? "transformer_engine" : "full_iteration");
}

void write_optimizer_and_ddp(Yaml& y, const Strategy& st)
{
    y.section("optimizer");
    y.kv("optimizer", std::string(to_string(st.optimizer)));
    y.kv("lr", "1.0e-4");
    y.kv("min_lr", "1.0e-5");
    y.kv("use_distributed_optimizer", boolean(st.zero >= 1));
    if (st.offload_optimizer) {
        y.kv("optimizer_cpu_offload", "true");
        y.kv("use_precision_aware_optimizer", "true");
    }
    y.section("ddp");
    y.kv("use_distributed_optimizer", boolean(st.zero >= 1));
    y.kv("overlap_grad_reduce", boolean(st.overlap_grad_reduce && data_sharded(st)));
    y.kv("overlap_param_gather",
        boolean(st.overlap_param_gather && st.overlap_grad_reduce && st.zero >= 1 && data_sharded(st)));
    y.kv("use_megatron_fsdp", boolean(st.zero >= 2));
    if (st.zero >= 2)
        y.kv("data_parallel_sharding_strategy", st.zero == 2 ? "optim_grads" : "optim_grads_params");
    if (st.rank_order != RankOrder {}) {
        y.section("dist");
        y.kv("use_tp_pp_dp_mapping", "true");
    }
}

// Megatron-Bridge's registered recipes (megatron/bridge/training/mixed_precision.py).
std::string mixed_precision_recipe(const TrainingSpec& t)
{
    std::string mp = "bf16_mixed";
    if (t.precision == Precision::fp16)
        mp = "fp16_mixed";
    else if (t.precision == Precision::fp8)
        mp = t.fp8_scaling == Fp8Scaling::mxfp8      ? "bf16_with_mxfp8_mixed"
            : t.fp8_scaling == Fp8Scaling::delayed   ? "bf16_with_fp8_delayed_scaling_mixed"
            : t.fp8_scaling == Fp8Scaling::blockwise ? "bf16_with_fp8_subchannel_scaling_mixed"
                                                     : "bf16_with_fp8_current_scaling_mixed";
    else if (t.precision == Precision::fp4)
        mp = "bf16_with_nvfp4_mixed";
    return mp;
}

} // namespace

std::string nemo_yaml(const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    Yaml y;
    write_header(y, sc, o, notes);
    write_model_shape(y, m, t);
    if (m.is_moe())
        write_moe(y, m, t);
    write_parallelism(y, sc);
    write_recompute_and_graphs(y, st, t);
    y.section("train");
    y.kv("micro_batch_size", st.micro_batch);
    y.kv("global_batch_size", t.global_batch);
    y.kv("train_iters", o.steps);
    y.section("dataset");
    y.kv("seq_length", t.seq_len);
    write_optimizer_and_ddp(y, st);
    if (!is_full_precision(t.precision)) // no recipe: Megatron-Bridge then trains in fp32
        y.out << "\nmixed_precision: " << mixed_precision_recipe(t) << "\n";
    y.section("comm_overlap");
    y.kv("tp_comm_overlap", boolean(st.tp_comm_overlap && st.tp > 1));
    if (st.ep_overlap)
        y.kv("overlap_moe_expert_parallel_comm", "true");
    y.section("logger");
    y.kv("log_interval", 1);
    y.kv("log_throughput", "true");
    return y.out.str();
}

} // namespace parallax
