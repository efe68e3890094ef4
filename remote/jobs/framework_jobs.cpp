// Job templates for the real training frameworks: Megatron-LM (pretrain_gpt.py flags), torchtitan (its TOML)
// and DeepSpeed (ds_config.json with Megatron-DeepSpeed's pretrain_gpt.py). Each is a complete script the
// user can read and edit; the plan's settings map onto the framework's own flags, and what a framework
// cannot express is written into the script as a comment and into the run's notes.
#include "jobs/job_common.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace parallax::remote {

namespace {

constexpr int kFrameworkDefaultSteps = 30;

ShellWord lit(std::string s)
{
    return ShellWord::lit(std::move(s));
}
std::string num(long long v)
{
    return std::to_string(v);
}

void add(std::vector<ShellWord>& w, std::initializer_list<std::string> words)
{
    for (const auto& s : words)
        w.push_back(lit(s));
}

const std::string& require_path(const std::string& value, const RunRequest& req, const char* key, const char* what)
{
    if (value.empty())
        throw InputError("cluster profile '" + req.profile.name + "'", key,
            std::string("must be set to the cluster's ") + what + " checkout to generate this job");
    return value;
}

// What the plan asks for that a framework does not do, said in the script and the run's notes.
void note(JobBundle& b, BashScript& s, const std::string& text)
{
    b.notes.push_back(text);
    s.comment("NOTE: " + text);
}

std::string toml_string(const std::string& v)
{
    std::string out = "\"";
    for (char c : v) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

} // namespace

std::string slurm_node_launcher_script(const RunRequest& req, const JobBundle& b, const std::string& run_id,
    const std::string& run_dir, const std::string& what)
{
    BashScript s;
    write_header(s, req, run_id, what + " under SLURM (srun runs node.sh once per node)");
    write_environment(s, req, run_dir);
    write_slurm_rendezvous(s, req.profile);
    std::vector<ShellWord> w { lit("srun"), lit("--kill-on-bad-exit=1"), lit("--nodes=" + num(b.nodes)),
        lit("--ntasks=" + num(b.nodes)), lit("--ntasks-per-node=1") };
    if (b.cpus_per_task > 0)
        w.push_back(lit("--cpus-per-task=" + num(static_cast<long long>(b.cpus_per_task) * b.ranks_per_node)));
    if (req.profile.container_runtime == "pyxis")
        for (auto& c : container_prefix(req.profile, true))
            w.push_back(std::move(c));
    add(w, { "bash", b.node_script });
    write_launch(s, w);
    return s.text();
}

std::vector<ShellWord> megatron_model_flags(const Scenario& sc)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    std::vector<ShellWord> w;
    add(w,
        { "--num-layers", num(m.layers), "--hidden-size", num(m.hidden), "--num-attention-heads", num(m.heads),
            "--ffn-hidden-size", num(m.ffn_hidden), "--seq-length", num(sc.training.seq_len),
            "--max-position-embeddings", num(sc.training.seq_len) });
    if (m.kv_heads != m.heads)
        add(w, { "--group-query-attention", "--num-query-groups", num(m.kv_heads) });
    if (m.head_dim_override)
        add(w, { "--kv-channels", num(*m.head_dim_override) });
    if (m.ffn_act == FfnActivation::swiglu)
        add(w,
            { "--swiglu", "--normalization", "RMSNorm", "--position-embedding-type", "rope", "--disable-bias-linear" });
    if (!m.tied_embeddings)
        add(w, { "--untie-embeddings-and-output-weights" });
    if (!m.has_dropout())
        add(w, { "--attention-dropout", "0.0", "--hidden-dropout", "0.0" });
    if (m.is_moe()) {
        add(w,
            { "--num-experts", num(m.moe->experts), "--moe-router-topk", num(m.moe->top_k), "--moe-ffn-hidden-size",
                num(m.moe->expert_ffn_hidden), "--moe-token-dispatcher-type", "alltoall", "--moe-grouped-gemm" });
        if (m.moe->shared_experts > 0)
            add(w, { "--moe-shared-expert-intermediate-size", num(m.moe->shared_experts * m.moe->expert_ffn_hidden) });
        if (m.moe->capacity_factor)
            add(w, { "--moe-expert-capacity-factor", std::to_string(*m.moe->capacity_factor) });
    }
    // Parallelism (Megatron's names for the plan's degrees).
    add(w, { "--tensor-model-parallel-size", num(st.tp), "--pipeline-model-parallel-size", num(st.pp) });
    if (st.vpp > 1)
        add(w, { "--num-layers-per-virtual-pipeline-stage", num(m.layers / (st.pp * st.vpp)) });
    if (st.first_stage_layers > 0)
        add(w, { "--decoder-first-pipeline-num-layers", num(st.first_stage_layers) });
    if (st.last_stage_layers > 0)
        add(w, { "--decoder-last-pipeline-num-layers", num(st.last_stage_layers) });
    if (st.cp > 1)
        add(w, { "--context-parallel-size", num(st.cp), "--cp-comm-type", st.cp_kind == CpKind::ring ? "p2p" : "a2a" });
    if (st.ep > 1)
        add(w, { "--expert-model-parallel-size", num(st.ep) });
    if (st.expert_tp > 0 && st.expert_tp != st.tp)
        add(w, { "--expert-tensor-parallel-size", num(st.expert_tp) });
    if (st.sequence_parallel && st.tp > 1)
        add(w, { "--sequence-parallel" });
    if (st.recompute == Recompute::selective)
        add(w, { "--recompute-activations" });
    else if (st.recompute == Recompute::full)
        add(w, { "--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1" });
    add(w, { "--micro-batch-size", num(st.micro_batch), "--global-batch-size", num(sc.training.global_batch) });
    switch (sc.training.precision) {
    case Precision::fp16:
        add(w, { "--fp16" });
        break;
    case Precision::fp8:
        add(w,
            { "--bf16", "--fp8-format", "hybrid", "--fp8-amax-history-len", "1024", "--fp8-amax-compute-algo", "max" });
        break;
    default:
        add(w, { "--bf16" });
        break;
    }
    return w;
}

void add_megatron_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir)
{
    const std::string& megatron = require_path(req.profile.megatron_path, req, "megatron_path", "Megatron-LM");
    const Scenario& sc = req.scenario;
    const Strategy& st = sc.strategy;
    b.steps = req.steps > 0 ? req.steps : kFrameworkDefaultSteps;
    b.description = "Megatron-LM " + num(b.world_size) + " GPUs, " + num(b.steps) + " iterations";
    BashScript s;
    write_header(s, req, run_id, "Megatron-LM pretrain_gpt.py on one node (torchrun starts its ranks)");
    if (st.schedule == Schedule::zb_h1 || st.schedule == Schedule::dualpipe)
        note(b, s,
            "Megatron-LM runs 1F1B (interleaved with vpp > 1); the plan's " + std::string(to_string(st.schedule))
                + " schedule is not available in it");
    if (st.zero >= 2)
        note(b, s,
            "ZeRO " + num(st.zero)
                + " maps onto Megatron's distributed optimizer (it shards optimizer states and "
                  "reduce-scatters gradients)"
                + std::string(
                    st.zero == 3 ? "; for parameter sharding add --use-torch-fsdp2 if your Megatron-LM has it" : ""));
    if (st.offload_optimizer)
        note(b, s, "optimizer offload: add --optimizer-cpu-offload if your Megatron-LM version has it");
    if (sc.training.precision == Precision::fp4)
        note(b, s, "fp4 matmuls need a Megatron-LM/Transformer Engine with --fp4-format; this script runs bf16");
    s.comment("Megatron-LM prints `iteration N/ M | ... elapsed time per iteration (ms) | throughput per GPU "
              "(TFLOP/s/GPU)` (--log-throughput) and one `[Rank R] (after K iterations) memory (MB)` report; add "
              "--log-energy on versions that have it for power.");
    write_environment(s, req, run_dir);
    write_node_rendezvous(s);
    s.blank();
    s.comment("The plan as pretrain_gpt.py flags. Mock data and a null tokenizer: a throughput validation run "
              "needs no dataset.");
    std::vector<ShellWord> args = megatron_model_flags(sc);
    if (st.zero >= 1)
        add(args, { "--use-distributed-optimizer" });
    if (st.overlap_grad_reduce && st.dp * st.cp > 1)
        add(args, { "--overlap-grad-reduce" });
    if (st.overlap_param_gather && st.zero >= 1 && st.dp * st.cp > 1)
        add(args, { "--overlap-param-gather" });
    if (st.tp_comm_overlap && st.tp > 1)
        add(args, { "--tp-comm-overlap" });
    if (st.optimizer == Optimizer::sgd)
        add(args, { "--optimizer", "sgd" });
    add(args,
        { "--train-iters", num(b.steps), "--lr", "1.0e-4", "--min-lr", "1.0e-5", "--lr-decay-style", "cosine",
            "--weight-decay", "0.1", "--clip-grad", "1.0", "--init-method-std", "0.02" });
    add(args, { "--mock-data", "--tokenizer-type", "NullTokenizer", "--vocab-size", num(sc.model.vocab) });
    add(args,
        { "--log-interval", "1", "--log-throughput", "--eval-iters", "0", "--eval-interval", num(b.steps + 1),
            "--distributed-timeout-minutes", "30", "--transformer-impl", "transformer_engine" });
    s.array("megatron_args", args);
    std::vector<ShellWord> w = torchrun_words(req.profile, b);
    w.push_back(lit(megatron + "/pretrain_gpt.py"));
    w.push_back(ShellWord::code("\"${megatron_args[@]}\""));
    write_launch(s, w);
    b.files.push_back({ b.node_script, s.text(), 0755 });
    b.files.push_back(
        { b.batch_script, slurm_node_launcher_script(req, b, run_id, run_dir, "Megatron-LM pretrain_gpt.py"), 0755 });
}

void add_torchtitan_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir)
{
    const std::string& titan = require_path(req.profile.torchtitan_path, req, "torchtitan_path", "torchtitan");
    const Scenario& sc = req.scenario;
    const Strategy& st = sc.strategy;
    b.steps = req.steps > 0 ? req.steps : kFrameworkDefaultSteps;
    b.description = "torchtitan " + num(b.world_size) + " GPUs, " + num(b.steps) + " steps";
    BashScript s;
    write_header(s, req, run_id, "torchtitan on one node (torchrun starts its ranks; the plan is in torchtitan.toml)");

    // torchtitan's data parallelism: FSDP (shard) for ZeRO 3 (and 1/2, which FSDP2 subsumes), DDP (replicate)
    // for plain data parallelism.
    const int shard = st.zero >= 1 ? st.dp : 1;
    const int replicate = st.zero >= 1 ? 1 : st.dp;
    std::string schedule = "1F1B";
    if (st.schedule == Schedule::gpipe)
        schedule = "GPipe";
    else if (st.schedule == Schedule::interleaved)
        schedule = "Interleaved1F1B";
    else if (st.schedule == Schedule::zb_h1)
        schedule = "InterleavedZeroBubble";
    else if (st.schedule == Schedule::dualpipe)
        note(b, s, "torchtitan has DualPipeV only in recent versions; this config asks for 1F1B");
    if (st.sequence_parallel == false && st.tp > 1)
        note(b, s,
            "torchtitan's tensor parallelism always shards the sequence in norms and dropout (sequence "
            "parallel on)");
    if (st.zero == 1 || st.zero == 2)
        note(b, s, "ZeRO " + num(st.zero) + " runs as FSDP (torchtitan shards parameters too)");
    std::ostringstream t;
    t << "# torchtitan config generated by Parallax for run " << run_id << ".\n";
    t << "# Plan: " << plan_summary(sc) << "\n";
    t << "# Keys follow torchtitan's JobConfig (2025); check them against your checkout's docs/config.\n\n";
    t << "[job]\n# dump_folder is set on the command line: $PARALLAX_RUN_DIR/outputs\ndescription = "
      << toml_string("Parallax validation run " + run_id) << "\n\n";
    t << "[metrics]\nlog_freq = 1\nenable_tensorboard = false\n\n";
    t << "[model]\nname = \"llama3\"\n";
    t << "# torchtitan builds models from its own registry: pick the flavor with the plan's shapes\n";
    t << "# (" << sc.model.name << ": " << sc.model.layers << " layers, hidden " << sc.model.hidden << ", "
      << sc.model.heads << " heads, ffn " << sc.model.ffn_hidden << ", vocab " << sc.model.vocab << ").\n";
    std::string flavor = "8B";
    if (sc.model.hidden >= 16384)
        flavor = "405B";
    else if (sc.model.hidden >= 8192)
        flavor = "70B";
    t << "flavor = " << toml_string(flavor) << "\nhf_assets_path = " << toml_string(titan + "/assets/hf/Llama-3.1-8B")
      << "\n";
    if (sc.training.precision == Precision::fp8)
        t << "converters = [\"float8\"]  # the plan's fp8 matmuls\n";
    t << "\n";
    t << "[optimizer]\nname = " << toml_string(st.optimizer == Optimizer::sgd ? "SGD" : "AdamW") << "\nlr = 8e-4\n\n";
    t << "[lr_scheduler]\nwarmup_steps = 2\n\n";
    t << "[training]\nlocal_batch_size = " << st.micro_batch << "\nglobal_batch_size = " << sc.training.global_batch
      << "\nseq_len = " << sc.training.seq_len << "\nsteps = " << b.steps << "\nmax_norm = 1.0\ndataset = \"c4_test\"\n"
      << "mixed_precision_param = " << toml_string(sc.training.precision == Precision::fp16 ? "float16" : "bfloat16")
      << "\n\n";
    t << "[parallelism]\ndata_parallel_replicate_degree = " << replicate << "\ndata_parallel_shard_degree = " << shard
      << "\ntensor_parallel_degree = " << st.tp << "\npipeline_parallel_degree = " << st.pp
      << "\npipeline_parallel_schedule = " << toml_string(schedule) << "\ncontext_parallel_degree = " << st.cp
      << "\nexpert_parallel_degree = " << st.ep
      << "\nenable_async_tensor_parallel = " << (st.tp_comm_overlap ? "true" : "false") << "\n\n";
    t << "[activation_checkpoint]\nmode = "
      << toml_string(st.recompute == Recompute::full    ? "full"
                 : st.recompute == Recompute::selective ? "selective"
                                                        : "none")
      << "\nselective_ac_option = \"op\"\n\n";
    t << "[compile]\nenable = " << (sc.training.framework == Framework::torchtitan_compile ? "true" : "false")
      << "\ncomponents = [\"model\", \"loss\"]\n\n";
    t << "[checkpoint]\nenable = false\n";
    b.files.push_back({ "torchtitan.toml", t.str(), 0644 });

    write_environment(s, req, run_dir);
    write_node_rendezvous(s);
    std::vector<ShellWord> w = torchrun_words(req.profile, b);
    add(w, { "-m", "torchtitan.train", "--job.config_file" });
    w.push_back(in_run_dir("torchtitan.toml"));
    w.push_back(lit("--job.dump_folder"));
    w.push_back(in_run_dir("outputs"));
    s.comment("torchtitan runs from its checkout (module path):");
    s.raw("cd " + shell_quote(titan));
    write_launch(s, w);
    b.files.push_back({ b.node_script, s.text(), 0755 });
    b.files.push_back({ b.batch_script, slurm_node_launcher_script(req, b, run_id, run_dir, "torchtitan"), 0755 });
}

void add_deepspeed_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir)
{
    const std::string& mds = require_path(req.profile.deepspeed_path, req, "deepspeed_path", "Megatron-DeepSpeed");
    const Scenario& sc = req.scenario;
    const Strategy& st = sc.strategy;
    b.steps = req.steps > 0 ? req.steps : kFrameworkDefaultSteps;
    b.description = "DeepSpeed (Megatron-DeepSpeed) " + num(b.world_size) + " GPUs, " + num(b.steps) + " steps";
    BashScript s;
    write_header(s, req, run_id, "Megatron-DeepSpeed pretrain_gpt.py with DeepSpeed on one node");
    if (st.cp > 1)
        note(b, s,
            "Megatron-DeepSpeed has no context parallelism (its sequence parallelism is Ulysses, "
            "--ds-sequence-parallel-size); the plan's cp is not applied");
    if (st.vpp > 1)
        note(b, s, "DeepSpeed's pipeline engine has no interleaved schedule; vpp is not applied");
    if (st.zero >= 2 && st.pp > 1)
        note(b, s, "DeepSpeed allows ZeRO 2/3 only without pipeline parallelism; stage 1 is used with pp > 1");

    const long long micro = microbatch_count(sc.training, st);
    nlohmann::ordered_json ds;
    ds["train_batch_size"] = sc.training.global_batch;
    ds["train_micro_batch_size_per_gpu"] = st.micro_batch;
    ds["gradient_accumulation_steps"] = micro;
    ds["steps_per_print"] = 1; // DeepSpeed's throughput lines (RunningAvgSamplesPerSec) need it
    ds["gradient_clipping"] = 1.0;
    ds["zero_optimization"] = { { "stage", st.pp > 1 ? std::min(st.zero, 1) : st.zero } };
    if (st.offload_optimizer)
        ds["zero_optimization"]["offload_optimizer"] = { { "device", "cpu" } };
    ds["bf16"] = { { "enabled", sc.training.precision != Precision::fp16 } };
    ds["fp16"] = { { "enabled", sc.training.precision == Precision::fp16 } };
    ds["wall_clock_breakdown"] = false;
    ds["flops_profiler"] = { { "enabled", false } };
    b.files.push_back({ "ds_config.json", nlohmann::json(ds).dump(2) + "\n", 0644 });

    s.comment("Megatron-DeepSpeed needs a preprocessed dataset: set DATA_PATH (prefix of the .bin/.idx files) and");
    s.comment("the tokenizer files below, or export them in the cluster profile's env.");
    s.raw(": \"${DATA_PATH:?set DATA_PATH to a Megatron dataset prefix (see the comment above)}\"");
    s.raw(": \"${VOCAB_FILE:?set VOCAB_FILE (gpt2-vocab.json)}\" \"${MERGE_FILE:?set MERGE_FILE (gpt2-merges.txt)}\"");
    write_environment(s, req, run_dir);
    write_node_rendezvous(s);
    std::vector<ShellWord> args = megatron_model_flags(sc);
    add(args,
        { "--train-iters", num(b.steps), "--lr", "1.0e-4", "--min-lr", "1.0e-5", "--lr-decay-style", "cosine",
            "--weight-decay", "0.1", "--clip-grad", "1.0", "--log-interval", "1", "--eval-iters", "0",
            "--eval-interval", num(b.steps + 1), "--deepspeed", "--deepspeed_config" });
    args.push_back(in_run_dir("ds_config.json"));
    add(args, { "--zero-stage", num(st.pp > 1 ? std::min(st.zero, 1) : st.zero) });
    if (st.pp == 1)
        add(args, { "--no-pipeline-parallel" });
    args.push_back(
        ShellWord::code("--data-path \"$DATA_PATH\" --vocab-file \"$VOCAB_FILE\" --merge-file \"$MERGE_FILE\""));
    s.array("megatron_deepspeed_args", args);
    std::vector<ShellWord> w = torchrun_words(req.profile, b);
    w.push_back(lit(mds + "/pretrain_gpt.py"));
    w.push_back(ShellWord::code("\"${megatron_deepspeed_args[@]}\""));
    write_launch(s, w);
    b.files.push_back({ b.node_script, s.text(), 0755 });
    b.files.push_back(
        { b.batch_script, slurm_node_launcher_script(req, b, run_id, run_dir, "Megatron-DeepSpeed"), 0755 });
}

} // namespace parallax::remote
