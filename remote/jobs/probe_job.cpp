// The built-in probe (resources/probe/parallax_probe.py): what it trains, its plan file and its launchers.
#include "io/scenario_io.hpp"
#include "jobs/job_common.hpp"
#include "model/model_math.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>

namespace parallax::remote {

namespace {

constexpr int kProbeDefaultSteps = 6; // >= kMinStepsForMedians + 1, so the summary has medians
// Layers per pipeline stage the probe trains by default: enough to show the per-layer cost and the
// stage's p2p, small enough to fit any GPU with plain (unsharded) Adam.
constexpr int kProbeLayersPerStage = 2;
// Collective benchmarks are capped: a gradient bucket of 256 MiB on GPUs (Megatron's buckets are
// ~40M parameters = 160 MiB in fp32), 4 MiB on CPU where gloo moves ~0.4 GB/s.
constexpr long long kBenchMaxBytesGpu = 256LL << 20;
constexpr long long kBenchMaxBytesCpu = 4LL << 20;

struct ProbeShape {
    int layers = 0;
    int microbatches = 0;
    int steps = 0;
};

ProbeShape probe_shape(const RunRequest& req)
{
    const Scenario& sc = req.scenario;
    const int pp = sc.strategy.pp;
    ProbeShape shape;
    if (req.probe_layers > 0) {
        if (req.probe_layers % pp != 0)
            throw InputError("run", "probe_layers", "must be a multiple of pp (" + std::to_string(pp) + ")");
        shape.layers = req.probe_layers;
    } else {
        const int per_stage = std::clamp(sc.model.layers / pp, 1, kProbeLayersPerStage);
        shape.layers = per_stage * pp;
    }
    const long long plan_micro = std::max(1LL, microbatch_count(sc.training, sc.strategy));
    shape.microbatches = req.probe_microbatches > 0
        ? req.probe_microbatches
        : static_cast<int>(std::min<long long>(plan_micro, std::max(2, 2 * pp)));
    shape.steps = req.steps > 0 ? req.steps : kProbeDefaultSteps;
    return shape;
}

// The scenario of what the probe really trains: the plan's shapes with fewer layers and micro-batches, CP
// ranks as data-parallel replicas, GPipe, no recompute, no sharding, no overlap. Predicting it gives the
// like-for-like number to put next to the probe's measured step time.
std::optional<Scenario> probe_workload(const RunRequest& req, const ProbeShape& shape, std::vector<std::string>& notes)
{
    const Scenario& sc = req.scenario;
    if (sc.model.is_moe()) {
        notes.push_back("the probe trains dense layers; the plan's experts are only benchmarked (EP all-to-all), "
                        "so no like-for-like prediction is made");
        return std::nullopt;
    }
    if (sc.model.mla) {
        notes.push_back("the probe trains standard attention, not the plan's MLA: no like-for-like prediction");
        return std::nullopt;
    }
    Scenario w = sc;
    w.search.reset();
    w.model.name = sc.model.name + " (probe: " + std::to_string(shape.layers) + " layers)";
    w.model.layers = shape.layers;
    w.model.params_B.reset();
    w.strategy.dp = sc.strategy.dp * sc.strategy.cp;
    w.strategy.cp = 1;
    w.strategy.vpp = 1;
    w.strategy.ep = 1;
    w.strategy.schedule = Schedule::gpipe;
    w.strategy.recompute = Recompute::none;
    w.strategy.zero = 0;
    w.strategy.sequence_parallel = false;
    w.strategy.offload_optimizer = false;
    w.strategy.first_stage_layers = 0;
    w.strategy.last_stage_layers = 0;
    w.strategy.overlap_grad_reduce = false;
    w.strategy.overlap_param_gather = false;
    w.strategy.tp_comm_overlap = false;
    w.strategy.optimizer = sc.strategy.optimizer == Optimizer::sgd ? Optimizer::sgd : Optimizer::adam;
    w.training.global_batch = static_cast<long long>(w.strategy.dp) * w.strategy.micro_batch * shape.microbatches;
    if (w.training.precision == Precision::fp8 || w.training.precision == Precision::fp4)
        w.training.precision = Precision::bf16;
    w.training.framework = Framework::torchtitan; // eager PyTorch, SDPA attention, unfused elementwise ops
    if (sc.cluster.total_gpus() != w.strategy.total_gpus()) {
        w.cluster.nodes = 1;
        w.cluster.gpus_per_node = static_cast<int>(w.strategy.total_gpus());
    }
    w.dp_derived = false;
    try {
        validate_scenario(w, "probe workload");
    } catch (const InputError& e) {
        notes.push_back(std::string("no like-for-like prediction for the probe: ") + e.what());
        return std::nullopt;
    }
    return w;
}

nlohmann::json probe_plan(const RunRequest& req, const std::string& run_id, const ProbeShape& shape)
{
    const Scenario& sc = req.scenario;
    const ModelSpec& m = sc.model;
    nlohmann::ordered_json j;
    j["schema"] = 1;
    j["run_id"] = run_id;
    nlohmann::ordered_json model;
    model["name"] = m.name;
    model["layers"] = shape.layers;
    model["plan_layers"] = m.layers;
    model["hidden"] = m.hidden;
    model["heads"] = m.heads;
    model["kv_heads"] = m.kv_heads;
    model["head_dim"] = m.head_dim();
    model["ffn_hidden"] = m.ffn_hidden;
    model["vocab"] = m.vocab;
    model["ffn_act"] = m.ffn_act == FfnActivation::swiglu ? "swiglu" : "gelu";
    model["tied_embeddings"] = m.tied_embeddings;
    if (m.is_moe())
        model["moe"] = { { "experts", m.moe->experts }, { "top_k", m.moe->top_k } };
    j["model"] = model;
    j["training"] = { { "seq_len", sc.training.seq_len }, { "micro_batch", sc.strategy.micro_batch },
        { "microbatches", shape.microbatches }, { "steps", shape.steps },
        { "precision", std::string(to_string(sc.training.precision)) }, { "lr", 1e-4 } };
    j["strategy"] = { { "tp", sc.strategy.tp }, { "pp", sc.strategy.pp }, { "dp", sc.strategy.dp },
        { "cp", sc.strategy.cp }, { "ep", sc.strategy.ep }, { "rank_order", to_string(sc.strategy.rank_order) },
        { "optimizer", std::string(to_string(sc.strategy.optimizer)) } };
    j["bench"] = { { "max_bytes", req.profile.cpu() ? kBenchMaxBytesCpu : kBenchMaxBytesGpu }, { "gemm", true } };
    // The DP benchmark moves one model-parallel rank's gradients (capped): parameters / (tp * pp).
    j["params_per_model_parallel_rank"]
        = static_cast<long long>(total_params(m) / (static_cast<double>(sc.strategy.tp) * sc.strategy.pp));
    j["gpu"]
        = { { "name", sc.cluster.gpu.name }, { "peak_TFLOPs", sc.cluster.gpu.peak(sc.training.precision) / 1e12 } };
    j["seed"] = 1234;
    return nlohmann::json(j);
}

} // namespace

void add_probe_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir)
{
    const ClusterProfile& p = req.profile;
    const Scenario& sc = req.scenario;
    const ProbeShape shape = probe_shape(req);
    b.steps = shape.steps;
    b.description = "probe " + std::to_string(b.world_size) + " ranks (tp " + std::to_string(sc.strategy.tp) + " pp "
        + std::to_string(sc.strategy.pp) + " dp " + std::to_string(sc.strategy.dp * sc.strategy.cp) + "), "
        + std::to_string(shape.layers) + " of " + std::to_string(sc.model.layers) + " layers, "
        + std::to_string(shape.microbatches) + " micro-batches x " + std::to_string(shape.steps) + " steps on "
        + (b.gpus ? "GPUs (NCCL)" : "CPUs (gloo)");
    b.notes.push_back("the probe trains " + std::to_string(shape.layers) + " of the plan's "
        + std::to_string(sc.model.layers) + " layers with " + std::to_string(shape.microbatches)
        + " micro-batches per step, GPipe order, no recompute, no ZeRO; compare its step time with the "
          "workload prediction, and its GEMM/collective benchmarks with the plan's op costs");
    if (sc.strategy.cp > 1)
        b.notes.push_back("context parallel ranks train as data-parallel replicas in the probe; the CP all-gather is "
                          "benchmarked");
    if (!b.gpus)
        b.notes.push_back("CPU ranks compute in fp32 with gloo; the plan's GPU numbers do not apply to them");
    b.workload = probe_workload(req, shape, b.notes);

    b.files.push_back({ "parallax_probe.py", probe_program(), 0644 });
    b.files.push_back({ "probe_plan.json", probe_plan(req, run_id, shape).dump(2) + "\n", 0644 });

    const std::vector<ShellWord> program { ShellWord::lit(p.python), ShellWord::lit("parallax_probe.py"),
        ShellWord::lit("--plan"), ShellWord::lit("probe_plan.json") };

    // job.sh: srun starts one task per rank; the probe reads SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID.
    {
        BashScript s;
        write_header(s, req, run_id, "the built-in probe under SLURM (srun starts one task per rank)");
        write_environment(s, req, run_dir);
        write_slurm_rendezvous(s, p);
        std::vector<ShellWord> w { ShellWord::lit("srun"), ShellWord::lit("--kill-on-bad-exit=1"),
            ShellWord::lit("--ntasks=" + std::to_string(b.world_size)),
            ShellWord::lit("--ntasks-per-node=" + std::to_string(b.ranks_per_node)) };
        if (b.cpus_per_task > 0)
            w.push_back(ShellWord::lit("--cpus-per-task=" + std::to_string(b.cpus_per_task)));
        for (auto& c : container_prefix(p, p.container_runtime == "pyxis"))
            w.push_back(std::move(c));
        w.insert(w.end(), program.begin(), program.end());
        write_launch(s, w);
        b.files.push_back({ b.batch_script, s.text(), 0755 });
    }
    // node.sh: torchrun starts this host's ranks (direct launcher).
    {
        BashScript s;
        write_header(s, req, run_id, "the built-in probe on one host (torchrun starts this host's ranks)");
        write_environment(s, req, run_dir);
        write_node_rendezvous(s);
        std::vector<ShellWord> w = torchrun_words(p, b);
        w.push_back(ShellWord::lit("parallax_probe.py"));
        w.push_back(ShellWord::lit("--plan"));
        w.push_back(ShellWord::lit("probe_plan.json"));
        write_launch(s, w);
        b.files.push_back({ b.node_script, s.text(), 0755 });
    }
}

} // namespace parallax::remote
