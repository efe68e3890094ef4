// torchtitan's TOML (v0.2.2, torchtitan/config/job_config.py, the last release configured by TOML; later
// ones take Python config registries) and the model flavour it runs.
#include "io/export/launch_config.hpp"
#include "io/export/launch_plan.hpp"
#include "io/export/launch_text.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace parallax {

using launch_plan::chunk_layer_counts;
using launch_plan::data_sharded;
using launch_plan::etp_of;
using launch_plan::has_torchtitan_csv;
using launch_plan::kTorchtitanScheduleCsv;
using launch_text::boolean;
using launch_text::comment_lines;
using launch_text::num;
using launch_text::toml_string;

// ------------------------------------------------------------------------------------------------
// torchtitan

namespace {

// torchtitan v0.2.2's registered flavours with the shapes they build (torchtitan/models/*/__init__.py; llama3's
// FFN width follows from ffn_dim_multiplier 1.3 and multiple_of) and the Hugging Face repo of their tokenizer
// (the models' READMEs: scripts/download_hf_assets.py --repo_id ... --assets tokenizer).
struct Flavor {
    const char* name;
    const char* flavor;
    const char* hf_repo;
    int layers;
    long long hidden;
    int heads;
    int kv_heads; // 0 = MLA
    long long ffn;
    long long vocab;
    int experts;
    int top_k;
    long long expert_ffn;
    int shared;
    int first_dense;
};
constexpr Flavor kFlavors[] = {
    { "llama3", "8B", "meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128256, 0, 0, 0, 0, 0 },
    { "llama3", "70B", "meta-llama/Llama-3.1-70B", 80, 8192, 64, 8, 28672, 128256, 0, 0, 0, 0, 0 },
    { "llama3", "405B", "meta-llama/Llama-3.1-405B", 126, 16384, 128, 8, 53248, 128256, 0, 0, 0, 0, 0 },
    { "qwen3", "0.6B", "Qwen/Qwen3-0.6B", 28, 1024, 16, 8, 3072, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "1.7B", "Qwen/Qwen3-1.7B", 28, 2048, 16, 8, 6144, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "4B", "Qwen/Qwen3-4B", 36, 2560, 32, 8, 9728, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "8B", "Qwen/Qwen3-8B", 36, 4096, 32, 8, 12288, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "14B", "Qwen/Qwen3-14B", 40, 5120, 40, 8, 17408, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "32B", "Qwen/Qwen3-32B", 64, 5120, 64, 8, 25600, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "30B-A3B", "Qwen/Qwen3-30B-A3B", 48, 2048, 32, 4, 6144, 151936, 128, 8, 768, 0, 0 },
    { "qwen3", "235B-A22B", "Qwen/Qwen3-235B-A22B", 94, 4096, 64, 4, 12288, 151936, 128, 8, 1536, 0, 0 },
    { "deepseek_v3", "16B", "deepseek-ai/deepseek-moe-16b-base", 27, 2048, 16, 0, 10944, 102400, 64, 6, 1408, 2, 1 },
    { "deepseek_v3", "236B", "deepseek-ai/DeepSeek-V2", 60, 5120, 128, 0, 12288, 102400, 160, 6, 1536, 2, 1 },
    { "deepseek_v3", "671B", "deepseek-ai/DeepSeek-V3.1-Base", 61, 7168, 128, 0, 18432, 129280, 256, 8, 2048, 1, 3 },
    { "gpt_oss", "20b", "openai/gpt-oss-20b", 24, 2880, 64, 8, 2880, 201088, 32, 4, 2880, 0, 0 },
    { "gpt_oss", "120b", "openai/gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088, 128, 4, 2880, 0, 0 },
};

bool matches(const Flavor& f, const ModelSpec& m)
{
    if (f.layers != m.layers || f.hidden != m.hidden || f.heads != m.heads || f.vocab != m.vocab)
        return false;
    if ((f.kv_heads == 0) != m.mla.has_value())
        return false;
    if (f.kv_heads != 0 && f.kv_heads != m.kv_heads)
        return false;
    if (f.experts == 0)
        return !m.is_moe() && f.ffn == m.ffn_hidden;
    if (!m.is_moe())
        return false;
    const MoeSpec& e = *m.moe;
    return e.experts == f.experts && e.top_k == f.top_k && e.expert_ffn_hidden == f.expert_ffn
        && e.shared_experts == f.shared && e.first_dense_layers == f.first_dense && e.moe_layer_freq == 1
        && (f.first_dense == 0 || m.ffn_hidden == f.ffn);
}

// ffn_dim_multiplier and multiple_of that make torchtitan's Llama MLP width rule give `width` for `dim`:
// hidden = int(2 * 4 * dim / 3), then int(ffn_dim_multiplier * hidden), rounded up to multiple_of
// (torchtitan/models/llama3/model/model.py FeedForward).
std::string llama_ffn_args(long long dim, long long width)
{
    const long long base = 8 * dim / 3;
    if (base <= 0 || width <= 0)
        return "ffn width " + num(width);
    for (long long mo : { 4096LL, 2048LL, 1024LL, 512LL, 256LL, 128LL, 64LL, 32LL, 16LL, 8LL, 4LL, 2LL, 1LL }) {
        if (width % mo != 0)
            continue;
        char text[32];
        std::snprintf(text, sizeof text, "%.4f", static_cast<double>(width) / static_cast<double>(base));
        const double mult = std::strtod(text, nullptr);
        long long h = static_cast<long long>(mult * static_cast<double>(base));
        h = mo * ((h + mo - 1) / mo);
        if (h == width)
            return std::string("ffn_dim_multiplier=") + text + ", multiple_of=" + num(mo);
    }
    return "ffn width " + num(width) + " (no ffn_dim_multiplier / multiple_of gives it exactly)";
}

std::string folder_of(const std::string& hf_repo)
{
    const auto slash = hf_repo.rfind('/');
    return slash == std::string::npos ? hf_repo : hf_repo.substr(slash + 1);
}

} // namespace

TorchtitanModel torchtitan_model(const ModelSpec& m)
{
    TorchtitanModel out;
    for (const Flavor& f : kFlavors)
        if (matches(f, m)) {
            out.name = f.name;
            out.flavor = f.flavor;
            out.hf_repo = f.hf_repo;
            out.registered = true;
            return out;
        }
    // No registered flavour has these shapes: name the family that can build it and what to register.
    out.flavor = m.name.empty() ? std::string("custom") : m.name;
    std::ostringstream args;
    if (m.mla && m.is_moe()) {
        out.name = "deepseek_v3";
        args << "DeepSeekV3ModelArgs(vocab_size=" << m.vocab << ", dim=" << m.hidden << ", inter_dim=" << m.ffn_hidden
             << ", moe_inter_dim=" << m.moe->expert_ffn_hidden << ", n_layers=" << m.layers
             << ", n_dense_layers=" << m.moe->first_dense_layers << ", n_heads=" << m.heads
             << ", moe_args=MoEArgs(num_experts=" << m.moe->experts << ", num_shared_experts=" << m.moe->shared_experts
             << ", top_k=" << m.moe->top_k << "), q_lora_rank=" << m.mla->q_lora_rank
             << ", kv_lora_rank=" << m.mla->kv_lora_rank << ", qk_nope_head_dim=" << m.mla->qk_nope_head_dim
             << ", qk_rope_head_dim=" << m.mla->qk_rope_head_dim << ", v_head_dim=" << m.mla->v_head_dim << ")";
    } else if (m.sliding_window > 0 || m.attention_sinks) {
        out.name = "gpt_oss";
        args << "GptOssModelArgs(n_layers=" << m.layers << ", dim=" << m.hidden << ", n_heads=" << m.heads
             << ", n_kv_heads=" << m.kv_heads << ", head_dim=" << m.head_dim() << ", vocab_size=" << m.vocab
             << ", sliding_window_size=" << m.sliding_window;
        if (m.is_moe())
            args << ", moe_inter_dim=" << m.moe->expert_ffn_hidden
                 << ", moe_args=MoEArgs(num_experts=" << m.moe->experts
                 << ", num_shared_experts=" << m.moe->shared_experts << ", top_k=" << m.moe->top_k << ")";
        args << ")";
    } else if (m.is_moe()) {
        // llama4's TransformerModelArgs takes routed and shared experts and an MoE-layer step; with
        // auto_scale_hidden_dim off, ffn_dim_multiplier / multiple_of must give the expert width below.
        out.name = "llama4";
        args << "TransformerModelArgs(dim=" << m.hidden << ", n_layers=" << m.layers << ", n_heads=" << m.heads
             << ", n_kv_heads=" << m.kv_heads << ", vocab_size=" << m.vocab
             << ", moe_args=MoEArgs(num_experts=" << m.moe->experts << ", num_shared_experts=" << m.moe->shared_experts
             << ", top_k=" << m.moe->top_k
             << ", score_func=\"softmax\", route_norm=True), interleave_moe_layer_step=" << m.moe->moe_layer_freq
             << ", auto_scale_hidden_dim=False, " << llama_ffn_args(m.hidden, m.moe->expert_ffn_hidden) << ")";
        if (m.moe->moe_layer_freq > 1)
            args << " (llama4 makes layers N-1, 2N-1, ... MoE layers for a step N; the model's MoE layers start at "
                    "layer "
                 << m.moe->first_dense_layers << ")";
        if (m.moe->first_dense_layers > 0)
            args << "; llama4 has no dense first layers (the model has " << m.moe->first_dense_layers << ")";
        if (m.ffn_hidden != m.moe->expert_ffn_hidden && m.moe_layer_count() < m.layers)
            args << "; its dense layers' MLP width " << m.ffn_hidden << " differs from the experts'";
    } else {
        out.name = "llama3";
        args << "TransformerModelArgs(dim=" << m.hidden << ", n_layers=" << m.layers << ", n_heads=" << m.heads
             << ", n_kv_heads=" << m.kv_heads << ", vocab_size=" << m.vocab << ", "
             << llama_ffn_args(m.hidden, m.ffn_hidden) << ", rope_theta=500000)";
    }
    out.custom_note = "torchtitan v0.2.2 has no flavour with the shapes of " + m.name + " (" + num(m.layers)
        + " layers, hidden " + num(m.hidden) + ", " + num(m.heads) + " heads, " + num(m.kv_heads) + " KV heads, FFN "
        + num(m.ffn_hidden) + ", vocab " + num(m.vocab)
        + (m.is_moe() ? ", " + num(m.moe->experts) + " experts top-" + num(m.moe->top_k) + " of width "
                    + num(m.moe->expert_ffn_hidden)
                      : std::string())
        + "). Register flavour \"" + out.flavor + "\" in torchtitan/models/" + out.name + "/__init__.py (" + out.name
        + "_args) before running this file: \"" + out.flavor + "\": " + args.str()
        + ". hf_assets_path must hold the model's own tokenizer (scripts/download_hf_assets.py --repo_id <its Hugging "
          "Face repo> --assets tokenizer).";
    return out;
}

namespace {

// Data parallelism: DDP (data_parallel_replicate) for ZeRO 0 when it is the only parallelism, FSDP2
// (data_parallel_shard) otherwise (torchtitan has no optimizer-only sharding: ZeRO 1 runs as FSDP).
bool shards_data(const Strategy& st)
{
    return st.zero >= 1 || (st.dp > 1 && !(st.tp == 1 && st.pp == 1 && st.cp == 1));
}

void note_data_parallel(const Strategy& st, std::vector<std::string>& notes)
{
    if (st.zero == 1 && data_sharded(st))
        notes.push_back("ZeRO 1 runs as FSDP (ZeRO 3): torchtitan has no optimizer-only sharding");
    if (st.zero == 0 && data_sharded(st) && !(st.tp == 1 && st.pp == 1 && st.cp == 1))
        notes.push_back("torchtitan's DDP runs only as the only parallelism; ZeRO 0 runs as FSDP here");
}

// torchtitan's name for the plan's schedule; one it cannot run is said in `notes` and runs as 1F1B.
std::string torchtitan_schedule(const Strategy& st, std::vector<std::string>& notes)
{
    if (st.schedule == Schedule::gpipe)
        return "GPipe";
    if (st.schedule == Schedule::interleaved)
        return "Interleaved1F1B";
    if (st.pp > 1 && (st.schedule == Schedule::zb_h1 || st.schedule == Schedule::dualpipe))
        notes.push_back("torchtitan has no one-stage " + std::string(to_string(st.schedule))
            + " schedule (its ZB and DualPipeV schedules need two stages per rank); this config asks for 1F1B");
    else if (has_torchtitan_csv(st))
        return "PipelineScheduleMulti"; // runs pipeline_parallel_schedule_csv (torchtitan's pp_custom_csv test)
    else if (st.schedule == Schedule::custom)
        notes.push_back("a DualPipe-layout schedule program has no looped torchtitan CSV; this config asks for 1F1B");
    return "1F1B";
}

void note_other_adaptations(const Strategy& st, const TrainingSpec& t, std::vector<std::string>& notes)
{
    if (!st.sequence_parallel && st.tp > 1)
        notes.push_back("torchtitan's tensor parallelism always shards the sequence in norms (sequence parallel on)");
    if (st.tp_comm_overlap && st.tp > 1 && t.framework != Framework::torchtitan_compile)
        notes.push_back("async TP needs torch.compile in torchtitan; enable_async_tensor_parallel is left off");
    if (st.offload_optimizer)
        notes.push_back("optimizer offload alone does not exist in torchtitan (training.enable_cpu_offload offloads "
                        "parameters and gradients too); not applied");
    if (st.cp > 1 && st.cp_kind == CpKind::all_to_all)
        notes.push_back("torchtitan's context parallelism is ring attention; the plan's all-to-all cp runs as a ring");
}

void write_header(
    std::ostringstream& x, const Scenario& sc, const LaunchSettings& o, const std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    x << comment_lines(
        "torchtitan config written by Parallax" + (o.run_label.empty() ? std::string() : " for " + o.run_label) + ".");
    x << comment_lines("Plan: " + plan_summary(sc));
    x << "# torchtitan v0.2.x JobConfig keys (torchtitan/config/job_config.py); later torchtitan releases configure "
         "runs\n# with Python config registries (--module/--config) instead of TOML files.\n";
    x << "# Run: torchrun --nproc_per_node " << std::min<long long>(sc.cluster.gpus_per_node, st.total_gpus())
      << " [--nnodes N --rdzv_endpoint HOST:PORT] -m torchtitan.train --job.config_file THIS_FILE\n";
    for (const auto& n : notes)
        x << comment_lines("NOTE: " + n);
    x << "\n[job]\ndump_folder = \"./outputs\"\ndescription = "
      << toml_string("Parallax plan" + (o.run_label.empty() ? std::string() : " " + o.run_label) + ": " + m.name)
      << "\n\n";
    x << "[metrics]\nlog_freq = 1\nenable_tensorboard = false\n\n";
}

void write_model(std::ostringstream& x, const Scenario& sc, const TorchtitanModel& tm, const std::string& assets_root)
{
    const ModelSpec& m = sc.model;
    const TrainingSpec& t = sc.training;
    x << "[model]\nname = " << toml_string(tm.name) << "\nflavor = " << toml_string(tm.flavor) << "\n";
    const std::string root = assets_root.empty() ? std::string("./assets/hf") : assets_root;
    const std::string folder = tm.hf_repo.empty() ? m.name : folder_of(tm.hf_repo);
    x << "# the tokenizer: python scripts/download_hf_assets.py --repo_id "
      << (tm.hf_repo.empty() ? std::string("<the model's Hugging Face repo>") : tm.hf_repo) << " --assets tokenizer\n";
    x << "hf_assets_path = " << toml_string(root + "/" + folder) << "\n";
    if (t.precision == Precision::fp8)
        x << "converters = [\"quantize.linear.float8\"" << (m.is_moe() ? ", \"quantize.grouped_mm.float8\"" : "")
          << "]\n";
}

void write_training(std::ostringstream& x, const Scenario& sc, const LaunchSettings& o)
{
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    x << "\n[optimizer]\nname = \"AdamW\"\nlr = 8e-4\n";
    if (st.gradient_release)
        x << "early_step_in_backward = true\n";
    x << "\n[lr_scheduler]\nwarmup_steps = 2\n\n";
    // torchtitan: local_batch_size per data-parallel rank; with PP it is cut into micro-batches of
    // pipeline_parallel_microbatch_size, without PP gradients accumulate over global / (local * dp) steps.
    const long long local = st.pp > 1 ? t.global_batch / std::max(1, st.dp) : st.micro_batch;
    x << "[training]\nlocal_batch_size = " << local << "\nglobal_batch_size = " << t.global_batch
      << "\nseq_len = " << t.seq_len << "\nsteps = " << o.steps << "\nmax_norm = 1.0"
      << "\ndataset = \"c4_test\"\nmixed_precision_param = \"bfloat16\"\n"
      << (st.offload_params ? "enable_cpu_offload = true\n" : "") << "\n";
}

// The plan's virtual stages by module name, in model order: the embedding on the first, norm and output
// on the last.
void write_stage_modules(std::ostringstream& x, const std::vector<int>& chunks)
{
    int layer = 0;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
        x << "  [";
        std::string sep;
        if (c == 0) {
            x << "\"tok_embeddings\"";
            sep = ", ";
        }
        for (int i = 0; i < chunks[c]; ++i, ++layer) {
            x << sep << "\"layers." << layer << "\"";
            sep = ", ";
        }
        if (c + 1 == chunks.size())
            x << sep << "\"norm\", \"output\"";
        x << "]" << (c + 1 == chunks.size() ? "" : ",") << "\n";
    }
}

void write_pipeline(std::ostringstream& x, const Scenario& sc, const std::string& schedule)
{
    const Strategy& st = sc.strategy;
    x << "pipeline_parallel_schedule = " << toml_string(schedule)
      << "\npipeline_parallel_microbatch_size = " << st.micro_batch << "\n";
    if (has_torchtitan_csv(st))
        x << "pipeline_parallel_schedule_csv = " << toml_string(kTorchtitanScheduleCsv) << "\n";
    const std::vector<int> chunks = chunk_layer_counts(sc);
    const bool even = std::all_of(chunks.begin(), chunks.end(), [&](int c) { return c == chunks.front(); });
    if (even) {
        // Embedding and output count as no layer: exactly pp * vpp stages of equal size.
        x << "pipeline_parallel_layers_per_stage = " << chunks.front()
          << "\npipeline_parallel_first_stage_less_layers = 0\npipeline_parallel_last_stage_less_layers = 0\n";
        return;
    }
    x << "# the plan's stages, in model order (" << chunks.size() << " = pp " << st.pp << " x vpp " << st.vpp
      << ")\nmodule_fqns_per_model_part = [\n";
    write_stage_modules(x, chunks);
    x << "]\n";
}

void write_parallelism(std::ostringstream& x, const Scenario& sc, const std::string& schedule)
{
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    const bool shard = shards_data(st);
    x << "[parallelism]\ndata_parallel_replicate_degree = " << (shard ? 1 : st.dp)
      << "\ndata_parallel_shard_degree = " << (shard ? st.dp : 1) << "\n";
    if (shard)
        x << "fsdp_reshard_after_forward = " << (st.zero == 2 ? "\"never\"" : "\"always\"") << "\n";
    x << "tensor_parallel_degree = " << st.tp << "\nenable_async_tensor_parallel = "
      << boolean(st.tp_comm_overlap && st.tp > 1 && t.framework == Framework::torchtitan_compile) << "\n";
    x << "pipeline_parallel_degree = " << st.pp << "\n";
    if (st.pp > 1)
        write_pipeline(x, sc, schedule);
}

void write_remaining(std::ostringstream& x, const Scenario& sc)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    x << "context_parallel_degree = " << st.cp << "\n";
    if (st.cp > 1)
        x << "context_parallel_rotate_method = \"allgather\"\n";
    if (m.is_moe()) {
        x << "expert_parallel_degree = " << st.ep
          << "\nexpert_tensor_parallel_degree = " << (st.ep > 1 ? etp_of(st) : 1) << "\nexpert_parallel_comm_backend = "
          << (t.moe_dispatcher == MoeDispatcher::deepep ? "\"deepep\"" : "\"standard\"") << "\n";
    }
    x << "\n[activation_checkpoint]\nmode = " << toml_string(std::string(to_string(st.recompute))) << "\n";
    if (st.recompute == Recompute::selective)
        x << "selective_ac_option = \"op\"\n";
    x << "\n[compile]\nenable = " << boolean(t.framework == Framework::torchtitan_compile)
      << "\ncomponents = [\"model\", \"loss\"]\n";
    if (t.precision == Precision::fp8) {
        x << "\n[quantize.linear.float8]\nrecipe_name = "
          << (t.fp8_scaling == Fp8Scaling::rowwise ? "\"rowwise\"" : "\"tensorwise\"") << "\n";
        if (m.is_moe())
            x << "\n[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n";
    }
    x << "\n[checkpoint]\nenable = false\n";
}

} // namespace

std::string torchtitan_toml(
    const Scenario& sc, const LaunchSettings& o, const std::string& assets_root, std::vector<std::string>& notes)
{
    const TorchtitanModel tm = torchtitan_model(sc.model);
    if (!tm.registered)
        notes.push_back(tm.custom_note);
    note_data_parallel(sc.strategy, notes);
    const std::string schedule = torchtitan_schedule(sc.strategy, notes);
    note_other_adaptations(sc.strategy, sc.training, notes);
    std::ostringstream x;
    write_header(x, sc, o, notes);
    write_model(x, sc, tm, assets_root);
    write_training(x, sc, o);
    write_parallelism(x, sc, schedule);
    write_remaining(x, sc);
    return x.str();
}

} // namespace parallax
