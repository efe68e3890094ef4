// Importing launch configurations (core/io/import): real files from Megatron-LM, torchtitan, NeMo,
// Megatron-Bridge, DeepSpeed and Hugging Face (tests/data/import, sources in SOURCES.md) become the
// scenarios they describe; every key of the input is in the report; the Megatron command line of the
// default scenario's plan predicts exactly what the default scenario predicts; bad input names the file,
// the key and the rule.
#include "io/import/import_scenario.hpp"
#include "io/import/shell_script.hpp"
#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/plan_context.hpp"
#include "spec/input_error.hpp"

#include <QTest>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

using namespace parallax;
using nlohmann::json;

namespace {

std::string data(const std::string& rel)
{
    return std::string(PARALLAX_SOURCE_DIR) + "/tests/data/import/" + rel;
}

ImportResult import_data(const std::string& rel, ImportOptions options = {}, std::optional<ImportFormat> format = {})
{
    return import_launch_config_file(data(rel), format, options, PresetCatalog::standard());
}

const ImportEntry* entry(const ImportResult& r, const std::string& key)
{
    return r.report.find(key);
}

ImportOutcome outcome(const ImportResult& r, const std::string& key)
{
    const ImportEntry* e = entry(r, key);
    if (!e)
        throw std::runtime_error("no report entry for " + key);
    return e->outcome;
}

const ImportEntry* assumed(const ImportResult& r, const std::string& target)
{
    for (const ImportEntry* e : r.report.of(ImportOutcome::assumed))
        if (e->target == target)
            return e;
    return nullptr;
}

// The InputError an import throws, as "file: key: rule"; empty when it does not throw.
std::string import_error(const std::string& text, const std::string& file, ImportOptions options = {},
    std::optional<ImportFormat> format = {})
{
    try {
        import_launch_config(text, file, format, options, PresetCatalog::standard());
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

Prediction predict(const Scenario& s)
{
    const PlanContext ctx(s.model, s.training, s.cluster);
    return AnalyticModel(ctx).predict(s.strategy);
}

// Every leaf key of a JSON object ("a.b.c"), as the importers name them.
void json_leaves(const json& j, const std::string& prefix, std::set<std::string>& out)
{
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object() && !it->empty())
            json_leaves(*it, key, out);
        else
            out.insert(key);
    }
}

// The input keys the report names, of any outcome.
std::set<std::string> reported(const ImportResult& r)
{
    std::set<std::string> keys;
    for (const ImportEntry& e : r.report.entries())
        keys.insert(e.key);
    return keys;
}

QStringList missing(const std::set<std::string>& input, const std::set<std::string>& report)
{
    QStringList out;
    for (const std::string& k : input)
        if (!report.count(k))
            out << QString::fromStdString(k);
    return out;
}

} // namespace

class TestImport : public QObject {
    Q_OBJECT

private slots:
    void shell_expansion_without_an_operator();
    void shell_variables_arrays_and_defaults();
    void shell_conditionals_eval_and_unknowns();
    void hf_configs_data();
    void hf_configs();
    void hf_config_reports_every_key();
    void hf_config_alone_gives_documented_defaults();
    void megatron_default_plan_predicts_the_default_scenario();
    void megatron_llama3_example();
    void megatron_llama3_8b_fp8_example();
    void megatron_gpt3_175b_example();
    void megatron_mixtral_example();
    void megatron_reports_every_flag();
    void megatron_command_line_on_stdin();
    void torchtitan_llama3_8b();
    void torchtitan_llama3_70b();
    void torchtitan_reports_every_key();
    void nemo_launcher_llama3_70b();
    void megatron_bridge_deepseek_v3();
    void yaml_reports_every_key();
    void deepspeed_needs_a_model();
    void deepspeed_zero2_with_model();
    void deepspeed_fp32_allreduce();
    void deepspeed_zero3_offload();
    void report_json_shape();
    void format_detection();
    void errors_name_file_key_and_rule();
    void imported_scenario_reloads();
};

// Found by fuzz_import: "${X:}" (a colon and nothing after it) threw std::out_of_range past the
// importer (exit 1); it is an expansion the importer does not know, like any other.
void TestImport::shell_expansion_without_an_operator()
{
    const std::string script = "#!/bin/bash\nTP=${X:}\ntorchrun pretrain_gpt.py --num-layers 2 --hidden-size 256 "
                               "--num-attention-heads 4 --seq-length 512 --max-position-embeddings 512 "
                               "--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size ${X:}\n";
    for (std::optional<ImportFormat> format :
        { std::optional<ImportFormat>(ImportFormat::megatron_args), std::optional<ImportFormat>() }) {
        try {
            import_launch_config(script, "x.sh", format, {}, PresetCatalog::standard());
        } catch (const InputError&) {
            // an answer (exit 2); std::out_of_range escaping fails the test
        }
    }
    const std::string error = import_error(script, "x.sh", {}, ImportFormat::megatron_args);
    QVERIFY2(error.empty() || error.find("x.sh") == 0, error.c_str());
}

void TestImport::shell_variables_arrays_and_defaults()
{
    const ShellRun run = run_shell_script(R"sh(#!/bin/bash
TP=4   # comment
PP="${PP:-8}"
NAME=${UNSET:-"a b"}
ARGS=(
    --one $TP   # a comment inside the array
    "--two x"
)
ARGS+=(--three "${NAME}")
N=$(( TP * PP + 1 ))
export CUDA_DEVICE_MAX_CONNECTIONS=1
python train.py ${ARGS[@]} --n $N \
    --pp ${PP} --q 'single quoted' --e "${EMPTY}"
)sh");
    QCOMPARE(run.commands.size(), std::size_t(1));
    const std::vector<std::string> expected = { "python", "train.py", "--one", "4", "--two", "x", "--three", "a", "b",
        "--n", "33", "--pp", "8", "--q", "single quoted", "--e", "" };
    QCOMPARE(run.commands[0].words, expected);
    QCOMPARE(run.commands[0].line, 12);
}

void TestImport::shell_conditionals_eval_and_unknowns()
{
    const ShellRun run = run_shell_script(R"sh(
SIZE=70
GPUS=`python3 -c "import torch; print(torch.cuda.device_count())"`
if [[ $SIZE -eq 8 ]]; then
    H=4096
elif [[ $SIZE -eq 70 ]]; then
    H=8192
else
    H=0
fi
if [ -z ${DATA+x} ]; then MOCK=--mock-data; fi
if [ ! -f "$SCRIPT" ]; then exit 1; fi
for a in "$@"; do echo $a; done
CMD="torchrun --nproc_per_node $GPUS x.py --hidden $H $MOCK"
eval $CMD |& tee log.txt
)sh");
    QCOMPARE(run.commands.size(), std::size_t(2)); // the eval'd torchrun and tee
    const auto& w = run.commands[0].words;
    QCOMPARE(w.front(), std::string("torchrun"));
    QVERIFY(is_unknown_shell_value(w[2]));
    QVERIFY(shell_value_text(w[2]).find("python3 -c") != std::string::npos);
    QCOMPARE(w[5], std::string("8192"));
    QCOMPARE(w[6], std::string("--mock-data"));
    QCOMPARE(run.commands[1].words.front(), std::string("tee"));
    // The file test and the loop are said, not run.
    QCOMPARE(run.notes.size(), std::size_t(2));
    QVERIFY(run.notes[0].find("-f") != std::string::npos);
    QVERIFY(run.notes[1].find("for") != std::string::npos);
}

void TestImport::hf_configs_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("preset");
    QTest::addRow("llama3-70b") << "hf/Meta-Llama-3-70B.config.json"
                                << "llama3-70b";
    QTest::addRow("mixtral") << "hf/Mixtral-8x7B-v0.1.config.json"
                             << "mixtral-8x7b";
    QTest::addRow("qwen3-moe") << "hf/Qwen3-30B-A3B.config.json"
                               << "qwen3-30b-a3b";
    QTest::addRow("deepseek-v3") << "hf/DeepSeek-V3.config.json"
                                 << "deepseek-v3";
    QTest::addRow("gpt-oss") << "hf/gpt-oss-120b.config.json"
                             << "gpt-oss-120b";
}

// Each config has exactly the shape of the preset made from it by hand (every field compared), so the
// scenario names the preset.
void TestImport::hf_configs()
{
    QFETCH(QString, file);
    QFETCH(QString, preset);
    const ImportResult r = import_data(file.toStdString());
    QCOMPARE(r.report.format, std::string("hf-config"));
    QCOMPARE(r.scenario["model"].get<std::string>(), preset.toStdString());
    QVERIFY(assumed(r, "model"));
    QCOMPARE(outcome(r, "num_hidden_layers"), ImportOutcome::mapped);
    QCOMPARE(entry(r, "num_hidden_layers")->target, std::string("model.layers"));
    QCOMPARE(outcome(r, "hidden_size"), ImportOutcome::mapped);
    QCOMPARE(outcome(r, "rope_theta"), ImportOutcome::no_effect);
}

void TestImport::hf_config_reports_every_key()
{
    for (const char* file : { "hf/Meta-Llama-3-70B.config.json", "hf/Mixtral-8x7B-v0.1.config.json",
             "hf/Qwen3-30B-A3B.config.json", "hf/DeepSeek-V3.config.json", "hf/gpt-oss-120b.config.json" }) {
        const ImportResult r = import_data(file);
        std::set<std::string> top;
        const json config = parse_json_text(read_text_file(data(file)), file);
        for (auto it = config.begin(); it != config.end(); ++it)
            top.insert(it.key());
        QVERIFY2(missing(top, reported(r)).isEmpty(),
            qPrintable(QString::fromLatin1(file) + QStringLiteral(": ")
                + missing(top, reported(r)).join(QStringLiteral(", "))));
    }
    // What the special models add is mapped, and their own keys are explained.
    const ImportResult ds = import_data("hf/DeepSeek-V3.config.json");
    QCOMPARE(entry(ds, "kv_lora_rank")->target, std::string("model.attention.kv_lora_rank"));
    QCOMPARE(entry(ds, "first_k_dense_replace")->target, std::string("model.moe.first_dense_layers"));
    QCOMPARE(entry(ds, "n_shared_experts")->target, std::string("model.moe.shared_experts"));
    QCOMPARE(outcome(ds, "num_nextn_predict_layers"), ImportOutcome::not_modelled);
    const ImportResult oss = import_data("hf/gpt-oss-120b.config.json");
    QCOMPARE(entry(oss, "layer_types")->target, std::string("model.full_attention_every"));
    QCOMPARE(entry(oss, "head_dim")->target, std::string("model.head_dim"));
    QCOMPARE(entry(oss, "model_type")->target, std::string("model.attention_sinks"));
    QCOMPARE(outcome(oss, "attention_bias"), ImportOutcome::not_modelled);
    QVERIFY(oss.parsed.model.expert_bias && oss.parsed.model.yarn_rope && oss.parsed.model.attention_sinks);
    QCOMPARE(outcome(oss, "experts_per_token"), ImportOutcome::no_effect);
    const ImportResult qwen = import_data("hf/Qwen3-30B-A3B.config.json");
    QCOMPARE(entry(qwen, "moe_intermediate_size")->target, std::string("model.moe.expert_ffn_hidden"));
    QCOMPARE(entry(qwen, "decoder_sparse_step")->target, std::string("model.moe.moe_layer_freq"));
}

// A config alone: the model, with the default scenario's training and cluster size, said as assumptions.
void TestImport::hf_config_alone_gives_documented_defaults()
{
    const ImportResult r = import_data("hf/Mixtral-8x7B-v0.1.config.json");
    QCOMPARE(r.parsed.cluster.total_gpus(), kDefaultImportGpus);
    QCOMPARE(r.parsed.cluster.gpu.name, std::string("H100-SXM5-80GB"));
    QCOMPARE(r.parsed.training.global_batch, 128LL);
    QCOMPARE(r.parsed.training.seq_len, 8192LL);
    QVERIFY(assumed(r, "cluster"));
    QVERIFY(assumed(r, "cluster.gpus"));
    QVERIFY(assumed(r, "training.seq_len"));
    QVERIFY(assumed(r, "training.global_batch"));
    QCOMPARE(r.scenario["cluster"]["gpu"].get<std::string>(), std::string("H100-SXM5-80GB"));
    QCOMPARE(r.scenario["cluster"]["inter_node"].get<std::string>(), std::string("ib-ndr"));
    // --cluster and --gpus choose another.
    ImportOptions o;
    o.cluster = "dgx-a100-superpod";
    o.gpus = 16;
    const ImportResult a100 = import_data("hf/Mixtral-8x7B-v0.1.config.json", o);
    QCOMPARE(a100.parsed.cluster.gpu.name, std::string("A100-SXM4-80GB"));
    QCOMPARE(a100.parsed.cluster.nodes, 2);
}

// The issue's "done when": the Megatron-LM command line of the default scenario's plan gives the default
// scenario, and both predict the same numbers.
void TestImport::megatron_default_plan_predicts_the_default_scenario()
{
    const ImportResult r = import_data("megatron/llama3_70b_default_plan.sh");
    const Scenario reference = load_scenario_preset("default", PresetCatalog::standard());
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("llama3-70b"));
    QCOMPARE(r.parsed.cluster.total_gpus(), 64LL);
    QCOMPARE(r.parsed.cluster.nodes, 8);
    QCOMPARE(r.parsed.cluster.gpu.name, reference.cluster.gpu.name);
    QCOMPARE(r.parsed.cluster.intra_node.name, reference.cluster.intra_node.name);
    QCOMPARE(r.parsed.cluster.inter_node.name, reference.cluster.inter_node.name);
    QCOMPARE(r.parsed.training.global_batch, reference.training.global_batch);
    QCOMPARE(r.parsed.training.seq_len, reference.training.seq_len);
    QVERIFY(r.parsed.training.precision == reference.training.precision);
    QVERIFY(r.parsed.training.framework == reference.training.framework);
    QVERIFY(r.parsed.strategy == reference.strategy);
    QCOMPARE(r.parsed.strategy.vpp, 5);
    QCOMPARE(r.parsed.strategy.dp, 2);
    const Prediction a = predict(reference);
    const Prediction b = predict(r.parsed);
    QVERIFY(a.feasible && b.feasible);
    QCOMPARE(b.step_time_s, a.step_time_s);
    QCOMPARE(b.tokens_per_s, a.tokens_per_s);
    QCOMPARE(b.peak_memory_bytes, a.peak_memory_bytes);
    QCOMPARE(b.power.avg_W_per_gpu, a.power.avg_W_per_gpu);
    QCOMPARE(entry(r, "--num-layers-per-virtual-pipeline-stage")->target, std::string("strategy.vpp"));
    QCOMPARE(entry(r, "torchrun --nnodes")->target, std::string("cluster.nodes"));
}

// Megatron-LM's examples/llama/train_llama3.sh (Llama 3 70B by default): GPUs per node come from a
// command substitution the importer does not run, so the cluster preset's 8 are used (said).
void TestImport::megatron_llama3_example()
{
    ImportOptions o;
    o.cluster = "mi300x-cluster"; // the script is AMD's (ROCm / RCCL settings)
    const ImportResult r = import_data("megatron/train_llama3.sh", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("llama3-70b"));
    const Strategy& s = r.parsed.strategy;
    QCOMPARE(s.tp, 8);
    QCOMPARE(s.pp, 1);
    QCOMPARE(s.cp, 1);
    QCOMPARE(s.dp, 1);
    QCOMPARE(s.micro_batch, 1);
    QVERIFY(s.sequence_parallel);
    QCOMPARE(s.zero, 1);
    QVERIFY(s.recompute == Recompute::none);
    QCOMPARE(r.parsed.training.global_batch, 8LL);
    QCOMPARE(r.parsed.training.seq_len, 2048LL);
    QCOMPARE(r.parsed.cluster.gpu.name, std::string("MI300X"));
    QCOMPARE(outcome(r, "torchrun --nproc_per_node"), ImportOutcome::not_modelled);
    QVERIFY(entry(r, "torchrun --nproc_per_node")->note.find("--gpus") != std::string::npos);
    QCOMPARE(entry(r, "--tokenizer-model")->target, std::string("model.vocab"));
    QCOMPARE(outcome(r, "--lr"), ImportOutcome::no_effect);
    QCOMPARE(outcome(r, "--no-gradient-accumulation-fusion"), ImportOutcome::not_modelled);
    const Prediction p = predict(r.parsed);
    QVERIFY2(p.feasible, p.infeasible_reason.c_str());
    QVERIFY(p.step_time_s > 0);
}

// Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh: arrays, quoted multi-flag items, fp8.
void TestImport::megatron_llama3_8b_fp8_example()
{
    const ImportResult r = import_data("megatron/train_llama3_8b_h100_fp8.sh");
    const std::string model = r.scenario["model"].get<std::string>();
    QVERIFY2(model == "llama3-8b" || model == "llama3.1-8b", model.c_str());
    QVERIFY(r.parsed.training.precision == Precision::fp8);
    QCOMPARE(r.parsed.cluster.total_gpus(), 8LL);
    QCOMPARE(r.parsed.strategy.tp, 1);
    QCOMPARE(r.parsed.strategy.dp, 8);
    QCOMPARE(r.parsed.strategy.zero, 1);
    QVERIFY(r.parsed.strategy.overlap_grad_reduce && r.parsed.strategy.overlap_param_gather);
    QCOMPARE(r.parsed.training.global_batch, 128LL);
    QCOMPARE(entry(r, "--fp8-format")->target, std::string("training.precision"));
    QVERIFY(!entry(r, "--bf16")->note.empty()); // bf16 masters, fp8 matmuls
    QCOMPARE(outcome(r, "--fp8-param-gather"), ImportOutcome::not_modelled);
    QCOMPARE(outcome(r, "--fp8-amax-history-len"), ImportOutcome::no_effect);
    QCOMPARE(entry(r, "--vocab-size")->value, std::string("128256"));
    const Prediction p = predict(r.parsed); // no recompute: Parallax finds it does not fit 80 GB
    QVERIFY(p.step_time_s > 0 || !p.infeasible_reason.empty());
}

// Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh: one node cannot hold TP 8 x PP 16; with
// --gpus it imports as GPT-3 175B (the GPT-2 vocabulary padded as Megatron pads it).
void TestImport::megatron_gpt3_175b_example()
{
    const std::string error = import_error(read_text_file(data("megatron/train_gpt3_175b_distributed.sh")), "gpt3.sh");
    QVERIFY2(error.find("gpt3.sh: torchrun --nnodes") == 0, error.c_str());
    QVERIFY2(error.find("--gpus") != std::string::npos, error.c_str());
    ImportOptions o;
    o.gpus = 1024;
    const ImportResult r = import_data("megatron/train_gpt3_175b_distributed.sh", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("gpt3-175b"));
    QCOMPARE(r.parsed.strategy.tp, 8);
    QCOMPARE(r.parsed.strategy.pp, 16);
    QCOMPARE(r.parsed.strategy.dp, 8);
    QCOMPARE(r.parsed.training.global_batch, 1536LL);
    QVERIFY(r.parsed.training.precision == Precision::fp16);
    QVERIFY(!r.parsed.strategy.overlap_grad_reduce); // Megatron's default without --overlap-grad-reduce
    QCOMPARE(outcome(r, "--step-batch-size-schedule"), ImportOutcome::not_modelled);
    QVERIFY(assumed(r, "model.ffn_hidden"));
    QVERIFY(predict(r.parsed).feasible);
}

// Megatron-LM's examples/mixtral/train_mixtral_8x7b_distributed.sh: on its one node EP 8 cannot fold into
// DP 2 (the error names the flag and the rule); on 4 nodes it is Mixtral 8x7B with EP 8.
void TestImport::megatron_mixtral_example()
{
    const std::string error = import_error(read_text_file(data("megatron/train_mixtral_8x7b_distributed.sh")), "mx.sh");
    QVERIFY2(error.find("mx.sh: --expert-model-parallel-size (strategy.ep): ") == 0, error.c_str());
    ImportOptions o;
    o.gpus = 32;
    const ImportResult r = import_data("megatron/train_mixtral_8x7b_distributed.sh", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("mixtral-8x7b"));
    QCOMPARE(r.parsed.strategy.ep, 8);
    QCOMPARE(r.parsed.strategy.pp, 4);
    QCOMPARE(r.parsed.strategy.dp, 8);
    QVERIFY(r.parsed.training.moe_dispatcher == MoeDispatcher::all_to_all);
    QCOMPARE(entry(r, "--num-experts")->target, std::string("model.moe.experts"));
    QCOMPARE(entry(r, "--moe-token-dispatcher-type")->target, std::string("training.moe_dispatcher"));
    QCOMPARE(outcome(r, "--moe-aux-loss-coeff"), ImportOutcome::no_effect);
    QVERIFY(assumed(r, "model.moe.expert_ffn_hidden"));
    QVERIFY(predict(r.parsed).feasible);
}

void TestImport::megatron_reports_every_flag()
{
    for (const char* file :
        { "megatron/train_llama3.sh", "megatron/train_llama3_8b_h100_fp8.sh", "megatron/llama3_70b_default_plan.sh" }) {
        const ImportResult r = import_data(file);
        const ShellRun run = run_shell_script(read_text_file(data(file)));
        std::set<std::string> flags;
        bool after_script = false;
        for (const ShellCommand& c : run.commands) {
            if (c.words.empty() || (c.words[0] != "torchrun"))
                continue;
            for (const std::string& w : c.words) {
                after_script = after_script || (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0);
                if (w.rfind("--", 0) == 0)
                    flags.insert(after_script ? w.substr(0, w.find('=')) : "torchrun " + w.substr(0, w.find('=')));
            }
        }
        QVERIFY(flags.size() > 20);
        QVERIFY2(missing(flags, reported(r)).isEmpty(),
            qPrintable(QString::fromLatin1(file) + QStringLiteral(": ")
                + missing(flags, reported(r)).join(QStringLiteral(", "))));
    }
}

// A bare command line (no script), read from text.
void TestImport::megatron_command_line_on_stdin()
{
    const std::string line
        = "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
          "--num-attention-heads 32 --ffn-hidden-size 14336 --swiglu --group-query-attention "
          "--num-query-groups 8 --untie-embeddings-and-output-weights --seq-length 4096 "
          "--micro-batch-size 2 --tensor-model-parallel-size 2 --vocab-size 128256 "
          "--hidden-dropout 0 --attention-dropout 0 --bf16 --frobnicate 3";
    const ImportResult r = import_launch_config(line, "<stdin>", std::nullopt, {}, PresetCatalog::standard());
    QCOMPARE(r.parsed.cluster.total_gpus(), 16LL);
    QCOMPARE(r.parsed.strategy.dp, 8);
    QCOMPARE(r.parsed.training.global_batch, 16LL); // Megatron's default: micro-batch x dp
    QVERIFY(assumed(r, "training.global_batch"));
    QCOMPARE(outcome(r, "--frobnicate"), ImportOutcome::not_modelled);
    QCOMPARE(entry(r, "--frobnicate")->note, std::string("not known to the importer"));
    // Selective recomputation by module and 16-bit gradient buffers.
    const ImportResult m = import_launch_config(line
            + " --recompute-granularity selective --recompute-modules "
              "layernorm mlp --grad-reduce-in-bf16",
        "<stdin>", std::nullopt, {}, PresetCatalog::standard());
    QVERIFY(m.parsed.strategy.recomputes(RecomputeModule::layernorm));
    QVERIFY(m.parsed.strategy.recomputes(RecomputeModule::mlp));
    QVERIFY(!m.parsed.strategy.recomputes(RecomputeModule::core_attn));
    QVERIFY(m.parsed.training.grad_reduce_in_bf16);
    QVERIFY(import_error(line + " --recompute-granularity selective --recompute-modules attention", "x.sh")
                .find("unknown module")
        != std::string::npos);
}

void TestImport::torchtitan_llama3_8b()
{
    ImportOptions o;
    o.gpus = 8;
    const ImportResult r = import_data("torchtitan/llama3_8b.toml", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("llama3.1-8b"));
    QVERIFY(r.parsed.training.framework == Framework::torchtitan);
    QCOMPARE(r.parsed.strategy.zero, 3);
    QCOMPARE(r.parsed.strategy.dp, 8);
    QCOMPARE(r.parsed.strategy.micro_batch, 1);
    QVERIFY(r.parsed.strategy.recompute == Recompute::selective);
    QCOMPARE(r.parsed.training.global_batch, 8LL);
    QCOMPARE(r.parsed.training.seq_len, 8192LL);
    QCOMPARE(entry(r, "activation_checkpoint.selective_ac_option")->outcome, ImportOutcome::mapped);
    QCOMPARE(outcome(r, "optimizer.lr"), ImportOutcome::no_effect);
    QCOMPARE(outcome(r, "quantize.linear.float8.filter_fqns"), ImportOutcome::no_effect);
    QVERIFY(predict(r.parsed).feasible);
}

void TestImport::torchtitan_llama3_70b()
{
    ImportOptions o;
    o.gpus = 64; // "a preset for 64 A100 GPUs"
    o.cluster = "dgx-a100-superpod";
    const ImportResult r = import_data("torchtitan/llama3_70b.toml", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("llama3.1-70b"));
    QCOMPARE(r.parsed.strategy.tp, 8);
    QCOMPARE(r.parsed.strategy.dp, 8);
    QCOMPARE(r.parsed.strategy.micro_batch, 8);
    QVERIFY(r.parsed.strategy.recompute == Recompute::full);
    QCOMPARE(r.parsed.training.global_batch, 64LL);
    QCOMPARE(r.parsed.cluster.gpu.name, std::string("A100-SXM4-80GB"));
    QCOMPARE(entry(r, "model.flavor")->target, std::string("model"));
    QVERIFY(predict(r.parsed).step_time_s > 0);
}

void TestImport::torchtitan_reports_every_key()
{
    const ImportResult r = import_data("torchtitan/llama3_70b.toml");
    const std::set<std::string> keys = reported(r);
    for (const char* key :
        { "job.dump_folder", "profiling.enable_profiling", "metrics.log_freq", "model.name", "model.hf_assets_path",
            "optimizer.name", "optimizer.eps", "lr_scheduler.warmup_steps", "training.local_batch_size",
            "training.dataset", "parallelism.data_parallel_replicate_degree", "parallelism.context_parallel_degree",
            "checkpoint.async_mode", "activation_checkpoint.mode", "compile.enable", "compile.components",
            "quantize.linear.float8.enable_fsdp_float8_all_gather", "validation.steps" })
        QVERIFY2(keys.count(key), key);
    // The file's 41 keys, each reported once.
    QCOMPARE(r.report.of(ImportOutcome::mapped).size() + r.report.of(ImportOutcome::no_effect).size()
            + r.report.of(ImportOutcome::not_modelled).size(),
        std::size_t(41));
    QCOMPARE(keys.size(), std::size_t(42)); // and "" for the assumed entries
}

// NeMo-Framework-Launcher's conf/training/llama/llama3_70b.yaml: 128 nodes of 8.
void TestImport::nemo_launcher_llama3_70b()
{
    const ImportResult r = import_data("nemo/llama3_70b.yaml");
    QCOMPARE(r.report.format, std::string("nemo-yaml"));
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("llama3-70b"));
    QCOMPARE(r.parsed.cluster.total_gpus(), 1024LL);
    const Strategy& s = r.parsed.strategy;
    QCOMPARE(s.tp, 4);
    QCOMPARE(s.pp, 4);
    QCOMPARE(s.vpp, 5);
    QCOMPARE(s.cp, 2);
    QCOMPARE(s.dp, 32);
    QVERIFY(s.schedule == Schedule::interleaved);
    QVERIFY(s.sequence_parallel);
    QVERIFY(s.tp_comm_overlap);
    QCOMPARE(s.zero, 1);
    QVERIFY(s.recompute == Recompute::none);
    QCOMPARE(r.parsed.training.global_batch, 2048LL);
    QVERIFY(r.parsed.training.precision == Precision::bf16);
    QCOMPARE(entry(r, "trainer.num_nodes")->target, std::string("cluster.nodes"));
    QCOMPARE(entry(r, "model.optim.name")->target, std::string("strategy.zero"));
    QCOMPARE(entry(r, "model.tokenizer.type")->target, std::string("model.vocab"));
    QCOMPARE(outcome(r, "exp_manager.checkpoint_callback_params.save_top_k"), ImportOutcome::no_effect);
    QVERIFY(predict(r.parsed).feasible);
}

// A Megatron-Bridge ConfigContainer dump (DeepSeek-V3 on H100 in fp8): MLA, MoE with dense-first layers,
// EP 64, the flex dispatcher with HybridEP.
void TestImport::megatron_bridge_deepseek_v3()
{
    ImportOptions o;
    o.gpus = 1024;
    const ImportResult r = import_data("nemo/deepseek_v3_pretrain_h100_fp8_sc_v1.yaml", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("deepseek-v3"));
    const Strategy& s = r.parsed.strategy;
    QCOMPARE(s.tp, 2);
    QCOMPARE(s.pp, 8);
    QCOMPARE(s.vpp, 4);
    QCOMPARE(s.ep, 64);
    QCOMPARE(s.expert_tp, 1);
    QCOMPARE(s.dp, 64);
    QCOMPARE(s.zero, 1);
    QVERIFY(!s.overlap_grad_reduce);
    QVERIFY(s.overlap_param_gather);
    QVERIFY(s.recompute == Recompute::selective);
    QVERIFY(r.parsed.training.precision == Precision::fp8);
    QVERIFY(r.parsed.training.moe_dispatcher == MoeDispatcher::deepep);
    QCOMPARE(r.parsed.training.global_batch, 8192LL);
    QCOMPARE(r.parsed.training.seq_len, 4096LL);
    QCOMPARE(outcome(r, "model.recompute_modules"), ImportOutcome::not_modelled);
    QCOMPARE(outcome(r, "model.pipeline_model_parallel_layout"), ImportOutcome::not_modelled);
    QCOMPARE(outcome(r, "mixed_precision.fp8_recipe"), ImportOutcome::mapped); // blockwise
    QCOMPARE(r.parsed.training.fp8_scaling, Fp8Scaling::blockwise);
    QCOMPARE(outcome(r, "model.kv_channels"), ImportOutcome::no_effect); // MLA's widths are its own
    QCOMPARE(outcome(r, "checkpoint.save_interval"), ImportOutcome::no_effect);
    // ddp.grad_reduce_in_fp32: false keeps Megatron's gradient buffers in bf16.
    QVERIFY(r.parsed.training.grad_reduce_in_bf16);
    QCOMPARE(outcome(r, "ddp.grad_reduce_in_fp32"), ImportOutcome::mapped);
    QCOMPARE(outcome(r, "mixed_precision.grad_reduce_in_fp32"), ImportOutcome::no_effect);
}

void TestImport::yaml_reports_every_key()
{
    for (const char* file : { "nemo/llama3_70b.yaml", "nemo/deepseek_v3_pretrain_h100_fp8_sc_v1.yaml" }) {
        ImportOptions o;
        o.gpus = 1024;
        const ImportResult r = import_data(file, o);
        // Every "key: value" line's key is the last part of some reported key.
        std::set<std::string> names;
        for (const ImportEntry& e : r.report.entries())
            names.insert(e.key.substr(e.key.rfind('.') + 1));
        QStringList absent;
        std::istringstream in(read_text_file(data(file)));
        for (std::string line; std::getline(in, line);) {
            const std::size_t start = line.find_first_not_of(' ');
            const std::size_t colon = line.find(':');
            if (start == std::string::npos || line[start] == '#' || line[start] == '-' || colon == std::string::npos
                || colon + 1 == line.size() || line.compare(start, 5, "hydra") == 0)
                continue; // comments, list items, and mappings (their keys are prefixes)
            const std::string key = line.substr(start, colon - start);
            if (!names.count(key) && key != "defaults")
                absent << QString::fromStdString(key);
        }
        QVERIFY2(absent.isEmpty(),
            qPrintable(QString::fromLatin1(file) + QStringLiteral(": ") + absent.join(QStringLiteral(", "))));
    }
}

void TestImport::deepspeed_needs_a_model()
{
    const std::string error = import_error(read_text_file(data("deepspeed/ds_zero2_config.json")), "ds.json");
    QVERIFY2(error.find("ds.json: --model: ") == 0, error.c_str());
}

// DeepSpeedExamples' Megatron-LM/scripts/ds_zero2_config.json with a model, GPUs and a sequence length.
void TestImport::deepspeed_zero2_with_model()
{
    ImportOptions o;
    o.model = "llama3-8b";
    o.gpus = 16;
    o.seq_len = 2048;
    const ImportResult r = import_data("deepspeed/ds_zero2_config.json", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("llama3-8b"));
    QCOMPARE(r.parsed.strategy.zero, 2);
    QCOMPARE(r.parsed.strategy.dp, 16);
    QCOMPARE(r.parsed.strategy.micro_batch, 1); // 16 / (1 accumulation x 16 ranks)
    QVERIFY(assumed(r, "strategy.micro_batch"));
    QCOMPARE(r.parsed.training.global_batch, 16LL);
    QCOMPARE(r.parsed.training.seq_len, 2048LL);
    QVERIFY(r.parsed.training.precision == Precision::fp16);
    QVERIFY(r.parsed.training.framework == Framework::megatron_deepspeed);
    QCOMPARE(outcome(r, "activation_checkpointing.partition_activations"), ImportOutcome::not_modelled);
    QCOMPARE(outcome(r, "optimizer.params.lr"), ImportOutcome::no_effect);
    QCOMPARE(outcome(r, "fp16.loss_scale_window"), ImportOutcome::no_effect);
}

// AMP's ds_config.json: fp16 training whose gradients DeepSpeed reduces in fp32, no ZeRO.
void TestImport::deepspeed_fp32_allreduce()
{
    ImportOptions o;
    o.model = "llama3-8b";
    o.gpus = 16;
    o.seq_len = 1024;
    const ImportResult r = import_data("deepspeed/amp_ds_config.json", o);
    QVERIFY(r.parsed.training.precision == Precision::fp16);
    QVERIFY(r.parsed.training.grad_reduce_in_fp32);
    QCOMPARE(entry(r, "fp32_allreduce")->target, std::string("training.grad_reduce_in_fp32"));
    QCOMPARE(r.scenario["training"]["grad_reduce_in_fp32"].get<bool>(), true);
    QCOMPARE(r.parsed.strategy.micro_batch, 2);
    QCOMPARE(r.parsed.strategy.zero, 0);
}

// transformers' tests/deepspeed/ds_config_zero3.json with the model from a Hugging Face config.
void TestImport::deepspeed_zero3_offload()
{
    ImportOptions o;
    o.model = data("hf/Qwen3-30B-A3B.config.json");
    o.gpus = 8;
    o.seq_len = 4096;
    const ImportResult r = import_data("deepspeed/ds_config_zero3.json", o);
    QCOMPARE(r.scenario["model"].get<std::string>(), std::string("qwen3-30b-a3b"));
    QCOMPARE(r.parsed.strategy.zero, 3);
    QVERIFY(r.parsed.strategy.offload_optimizer);
    QVERIFY(r.parsed.strategy.overlap_grad_reduce);
    QVERIFY(r.parsed.strategy.offload_params); // ZeRO-Infinity's parameter offload
    QCOMPARE(outcome(r, "zero_optimization.offload_param.device"), ImportOutcome::mapped);
    QCOMPARE(outcome(r, "zero_optimization.offload_param.pin_memory"), ImportOutcome::not_modelled);
    QVERIFY(entry(r, "Qwen3-30B-A3B.config.json: num_hidden_layers"));
    std::set<std::string> leaves;
    json_leaves(parse_json_text(read_text_file(data("deepspeed/ds_config_zero3.json")), "ds"), "", leaves);
    QVERIFY2(
        missing(leaves, reported(r)).isEmpty(), qPrintable(missing(leaves, reported(r)).join(QStringLiteral(", "))));
}

void TestImport::report_json_shape()
{
    const ImportResult r = import_data("megatron/llama3_70b_default_plan.sh");
    const auto j = import_report_to_json(r.report);
    QCOMPARE(j["format"].get<std::string>(), std::string("megatron-args"));
    QVERIFY(j["file"].get<std::string>().find("llama3_70b_default_plan.sh") != std::string::npos);
    for (const char* list : { "mapped", "no_effect", "not_modelled", "assumed" })
        QVERIFY2(j[list].is_array() && !j[list].empty(), list);
    const auto& first = j["mapped"][0];
    QVERIFY(first.contains("key") && first.contains("value") && first.contains("to"));
    QVERIFY(j["not_modelled"][0].contains("why"));
    QVERIFY(j["assumed"][0].contains("to") && j["assumed"][0].contains("why"));
    const std::string text = import_report_to_text(r.report);
    QVERIFY(text.find("--tensor-model-parallel-size 4 -> strategy.tp") != std::string::npos);
    QVERIFY(text.find("does not affect the prediction") != std::string::npos);
}

void TestImport::format_detection()
{
    const auto detect = [](const std::string& rel) { return detect_import_format(read_text_file(data(rel)), rel); };
    QVERIFY(detect("megatron/train_llama3.sh") == ImportFormat::megatron_args);
    QVERIFY(detect("torchtitan/llama3_8b.toml") == ImportFormat::torchtitan_toml);
    QVERIFY(detect("nemo/llama3_70b.yaml") == ImportFormat::nemo_yaml);
    QVERIFY(detect("nemo/deepseek_v3_pretrain_h100_fp8_sc_v1.yaml") == ImportFormat::nemo_yaml);
    QVERIFY(detect("deepspeed/ds_zero2_config.json") == ImportFormat::deepspeed_json);
    QVERIFY(detect("hf/DeepSeek-V3.config.json") == ImportFormat::hf_config);
    QVERIFY(!detect_import_format("hello", "notes.txt"));
    QVERIFY(is_scenario_text(read_text_file(std::string(PARALLAX_SOURCE_DIR) + "/presets/scenarios/default.json")));
}

void TestImport::errors_name_file_key_and_rule()
{
    const std::string base = "pretrain_gpt.py --num-layers 80 --hidden-size 8192 --num-attention-heads 64 "
                             "--seq-length 4096 --vocab-size 32000 ";
    std::string e = import_error(base + "--tensor-model-parallel-size four", "run.sh");
    QVERIFY2(e.find("run.sh: --tensor-model-parallel-size: must be an integer") == 0, e.c_str());
    e = import_error(base + "--tensor-model-parallel-size 3", "run.sh", [] {
        ImportOptions o;
        o.gpus = 3;
        return o;
    }());
    QVERIFY2(e.find("run.sh: --tensor-model-parallel-size (strategy.tp): ") == 0, e.c_str());
    e = import_error(
        "pretrain_gpt.py --num-layers 8 --hidden-size 64 --num-attention-heads 4 --vocab-size 100", "nolen.sh");
    QVERIFY2(e.find("nolen.sh: --seq-length: missing") == 0, e.c_str());
    e = import_error("[parallelism]\ntensor_parallel_degree = \n", "bad.toml");
    QVERIFY2(e.find("bad.toml: line 2: ") == 0, e.c_str());
    e = import_error("model:\n  tensor_model_parallel_size: [1, 2\n", "bad.yaml");
    QVERIFY2(e.find("bad.yaml: line ") == 0, e.c_str());
    e = import_error("model:\n  tensor_model_parallel_size: two\n  num_layers: 2\n", "two.yaml");
    QVERIFY2(e.find("two.yaml: model.tensor_model_parallel_size: must be an integer") == 0, e.c_str());
    e = import_error("model:\n  tensor_model_parallel_size: 1\n  num_layers: 2\n  hidden_dropout: [1]\n", "drop.yaml");
    QVERIFY2(e.find("drop.yaml: ") == 0, e.c_str());
    e = import_error("just some text", "notes.txt");
    QVERIFY2(e.find("notes.txt: --format: not recognised") == 0, e.c_str());
    e = import_error(read_text_file(std::string(PARALLAX_SOURCE_DIR) + "/presets/scenarios/default.json"), "s.json");
    QVERIFY2(e.find("already a Parallax scenario") != std::string::npos, e.c_str());
    e = import_error(R"({"num_hidden_layers": 4, "hidden_size": 64, "model_type": "llama"})", "cfg.json");
    QVERIFY2(e.find("cfg.json: num_attention_heads: missing") == 0, e.c_str());
    ImportOptions unknown_cluster;
    unknown_cluster.cluster = "dgx-h100-superpd";
    e = import_error(read_text_file(data("hf/Meta-Llama-3-70B.config.json")), "c.json", unknown_cluster);
    QVERIFY2(
        e.find("--cluster: unknown cluster preset \"dgx-h100-superpd\" (did you mean \"dgx-h100-superpod\"?)") == 0,
        e.c_str());
    e = import_error("[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n[training]\nseq_len = 2048\n", "dbg.toml");
    QVERIFY2(e.find("dbg.toml: model.flavor: the file does not describe the model") == 0, e.c_str());
}

// The scenario an import writes loads as it is and gives the same plan.
void TestImport::imported_scenario_reloads()
{
    for (const char* file :
        { "megatron/llama3_70b_default_plan.sh", "nemo/llama3_70b.yaml", "hf/gpt-oss-120b.config.json" }) {
        const ImportResult r = import_data(file);
        const Scenario again = parse_scenario_text(r.scenario.dump(2), "again.json", PresetCatalog::standard());
        QVERIFY(again.strategy == r.parsed.strategy);
        QCOMPARE(again.model.layers, r.parsed.model.layers);
        QCOMPARE(again.cluster.total_gpus(), r.parsed.cluster.total_gpus());
    }
}

QTEST_GUILESS_MAIN(TestImport)
#include "tst_import.moc"
