// `export`'s launch files read back: each format's file is parsed the way the framework reads it (the
// Megatron scripts run in bash with a stand-in torchrun that prints its argv; the TOML and YAML by their
// keys; ds_config.json with nlohmann) and every degree of the plan is checked in it. What a framework
// cannot run is refused, naming the feature and the framework; a model torchtitan has no flavour for is
// said, never replaced by another model; and the capability table agrees with the frameworks' sources.
#include "io/export/launch_config.hpp"
#include "io/export/shell_script.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/framework_support.hpp"
#include "spec/input_error.hpp"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

using namespace parallax;

namespace {

Scenario preset(const std::string& name)
{
    return load_scenario_preset(name, PresetCatalog::standard());
}

Scenario with_strategy(Scenario s, const std::string& strategy_json)
{
    nlohmann::json j = scenario_to_json(s);
    const nlohmann::json overrides = nlohmann::json::parse(strategy_json);
    for (auto it = overrides.begin(); it != overrides.end(); ++it) {
        if (it.value().is_null())
            j["strategy"].erase(it.key());
        else
            j["strategy"][it.key()] = it.value();
    }
    return parse_scenario(j, "test", PresetCatalog::standard());
}

// Flag -> its values (a switch maps to an empty list), from an argv.
using Flags = std::map<std::string, std::vector<std::string>>;

Flags flags_of(const QStringList& argv)
{
    Flags f;
    std::string current;
    for (const QString& a : argv) {
        const std::string w = a.toStdString();
        if (w.rfind("--", 0) == 0) {
            current = w;
            f[current];
        } else if (!current.empty()) {
            f[current].push_back(w);
        }
    }
    return f;
}

std::string value(const Flags& f, const std::string& flag)
{
    const auto it = f.find(flag);
    return it == f.end() || it->second.empty() ? std::string("<absent>") : it->second.front();
}

bool has(const Flags& f, const std::string& flag)
{
    return f.count(flag) > 0;
}

// Runs a generated launch script with a torchrun that prints its arguments, one per line: the argv
// pretrain_gpt.py would get, after bash expanded every array and variable.
QStringList run_script(const QTemporaryDir& dir, const std::string& script, const QString& name)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(script.data(), static_cast<qint64>(script.size())) < 0)
        qFatal("cannot write the script");
    f.close();
    const QString bin = dir.filePath(QStringLiteral("bin"));
    QDir().mkpath(bin);
    QFile torchrun(bin + QStringLiteral("/torchrun"));
    if (!torchrun.open(QIODevice::WriteOnly))
        qFatal("cannot write torchrun");
    torchrun.write("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
    torchrun.close();
    torchrun.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), bin + QStringLiteral(":") + env.value(QStringLiteral("PATH")));
    env.insert(QStringLiteral("MEGATRON_LM"), QStringLiteral("/opt/Megatron-LM"));
    env.insert(QStringLiteral("MEGATRON_DEEPSPEED"), QStringLiteral("/opt/Megatron-DeepSpeed"));
    env.insert(QStringLiteral("DATA_PATH"), QStringLiteral("/data/corpus_text_document"));
    env.insert(QStringLiteral("VOCAB_FILE"), QStringLiteral("/data/gpt2-vocab.json"));
    env.insert(QStringLiteral("MERGE_FILE"), QStringLiteral("/data/gpt2-merges.txt"));
    env.remove(QStringLiteral("NNODES"));
    env.remove(QStringLiteral("SLURM_NNODES"));
    env.remove(QStringLiteral("NODE_RANK"));
    env.remove(QStringLiteral("SLURM_NODEID"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("bash"), { path });
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        qWarning("%s", p.readAllStandardError().constData());
    return QString::fromUtf8(p.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

// section -> key -> raw value, for the TOML and the two-level YAML the exporters write.
using Sections = std::map<std::string, std::map<std::string, std::string>>;

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
        s.pop_back();
    std::size_t b = 0;
    while (b < s.size() && s[b] == ' ')
        ++b;
    return s.substr(b);
}

std::string unquote(std::string v)
{
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
        return v.substr(1, v.size() - 2);
    return v;
}

Sections toml_sections(const std::string& text)
{
    Sections out;
    std::string section;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        line = trim(line);
        if (line.empty() || line[0] == '#')
            continue;
        if (line.front() == '[' && line.back() == ']' && line.find('=') == std::string::npos) {
            section = line.substr(1, line.size() - 2);
            continue;
        }
        const auto eq = line.find(" = ");
        if (eq == std::string::npos)
            continue; // a continuation line of a multi-line array
        std::string v = line.substr(eq + 3);
        if (const auto hash = v.find("  #"); hash != std::string::npos)
            v = trim(v.substr(0, hash));
        out[section][line.substr(0, eq)] = unquote(v);
    }
    return out;
}

Sections yaml_sections(const std::string& text)
{
    Sections out;
    std::string section;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || trim(line).empty() || trim(line)[0] == '#')
            continue;
        const auto colon = line.find(": ");
        if (line[0] != ' ') {
            if (line.back() == ':') {
                section = line.substr(0, line.size() - 1);
            } else if (colon != std::string::npos) {
                out[""][line.substr(0, colon)] = trim(line.substr(colon + 2));
            }
            continue;
        }
        if (colon != std::string::npos)
            out[section][trim(line.substr(0, colon))] = unquote(trim(line.substr(colon + 2)));
    }
    return out;
}

bool python_has(const char* module)
{
    const QString py = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (py.isEmpty())
        return false;
    QProcess p;
    p.start(py, { QStringLiteral("-c"), QStringLiteral("import %1").arg(QLatin1String(module)) });
    return p.waitForFinished(20000) && p.exitCode() == 0;
}

// Parses `text` with Python's own parser (tomllib / yaml) into JSON, when the module is there.
std::optional<nlohmann::json> python_parse(const char* module, const std::string& text)
{
    if (!python_has(module))
        return std::nullopt;
    QProcess p;
    const QString code = QString::fromLatin1(module) == QLatin1String("tomllib")
        ? QStringLiteral("import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))")
        : QStringLiteral("import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))");
    p.start(QStandardPaths::findExecutable(QStringLiteral("python3")), { QStringLiteral("-c"), code });
    p.write(text.data(), static_cast<qint64>(text.size()));
    p.closeWriteChannel();
    if (!p.waitForFinished(20000) || p.exitCode() != 0)
        return nlohmann::json();
    return nlohmann::json::parse(p.readAllStandardOutput().toStdString());
}

std::string refusal(LaunchFormat f, const Scenario& s)
{
    try {
        export_launch_config(f, s, LaunchSettings {}, "plan.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The table says what the frameworks' sources say (framework_support.cpp cites them).
    void capability_table()
    {
        QVERIFY(!framework_supports(Framework::megatron, Schedule::zb_h1));
        QVERIFY(!framework_supports(Framework::megatron, Schedule::dualpipe));
        QVERIFY(framework_supports(Framework::megatron, Schedule::interleaved));
        QVERIFY(framework_supports(Framework::megatron_deepspeed, Schedule::zb_h1)); // --enable-zbh1-pipeline
        QVERIFY(!framework_supports(Framework::megatron_deepspeed, Schedule::interleaved));
        QVERIFY(framework_supports(Framework::torchtitan, Schedule::gpipe));
        QVERIFY(!framework_supports(Framework::torchtitan, Schedule::dualpipe));
        QVERIFY(!framework_supports(Framework::torchtitan, CpKind::all_to_all));
        QVERIFY(!framework_supports(Framework::megatron_deepspeed, CpKind::ring));
        QVERIFY(framework_supports_zero(Framework::megatron, 3, 4, false));
        QVERIFY(!framework_supports_zero(Framework::torchtitan, 1, 1, false));
        QVERIFY(!framework_supports_zero(Framework::torchtitan, 0, 2, false));
        QVERIFY(framework_supports_zero(Framework::torchtitan, 0, 1, true));
        QVERIFY(!framework_supports_zero(Framework::megatron_deepspeed, 2, 2, false));
        QVERIFY(framework_supports_zero(Framework::megatron_deepspeed, 3, 1, false));
        QVERIFY(!framework_supports_tp_comm_overlap(Framework::torchtitan));
        QVERIFY(framework_supports_tp_comm_overlap(Framework::torchtitan_compile));
        QVERIFY(!framework_supports(Framework::megatron, Optimizer::adam8bit));
        QVERIFY(!framework_supports(Framework::megatron, Precision::fp8, Fp8Scaling::rowwise));
        QVERIFY(framework_supports(Framework::megatron, Precision::fp8, Fp8Scaling::mxfp8));
        QVERIFY(!framework_supports(Framework::torchtitan, Precision::fp8, Fp8Scaling::delayed));
        QVERIFY(framework_supports(Framework::torchtitan, Precision::fp8, Fp8Scaling::rowwise));
        // A release is carried for training.software; today it does not change the answer.
        QCOMPARE(framework_supports(FrameworkRelease(Framework::megatron, "core_r0.14.0"), Schedule::zb_h1),
            framework_supports(Framework::megatron, Schedule::zb_h1));
        // Labels: a ZB-H1 plan without sequence parallelism runs in Megatron-DeepSpeed only.
        Scenario s = with_strategy(preset("default"),
            R"({"schedule": "zb-h1", "vpp": 1, "cp": 1, "dp": 4, "zero": 1, "sequence_parallel": false})");
        QCOMPARE(frameworks_running(s.strategy, s.model), std::vector<Framework> { Framework::megatron_deepspeed });
        s.strategy.sequence_parallel = true;
        QVERIFY(frameworks_running(s.strategy, s.model).empty());
        QCOMPARE(frameworks_label({}), std::string("none"));
    }

    // Megatron-LM: the script runs, and pretrain_gpt.py gets every degree of the plan.
    void megatron_script_carries_the_plan()
    {
        const Scenario s = preset("default"); // tp 4 pp 4 vpp 5 cp 2 dp 2, SP, selective, ZeRO 1
        const LaunchConfig c = export_launch_config(LaunchFormat::megatron, s, LaunchSettings {}, "default");
        QCOMPARE(c.files.size(), std::size_t(1));
        QCOMPARE(c.files[0].name, std::string("train_megatron.sh"));
        const QStringList argv = run_script(m_dir, c.files[0].content, QStringLiteral("m.sh"));
        QVERIFY2(
            argv.contains(QStringLiteral("/opt/Megatron-LM/pretrain_gpt.py")), qPrintable(argv.join(QLatin1Char(' '))));
        QCOMPARE(argv.indexOf(QStringLiteral("--nnodes")) >= 0 ? argv.at(argv.indexOf(QStringLiteral("--nnodes")) + 1)
                                                               : QString(),
            QStringLiteral("8"));
        const Flags f = flags_of(argv);
        QCOMPARE(value(f, "--tensor-model-parallel-size"), std::string("4"));
        QCOMPARE(value(f, "--pipeline-model-parallel-size"), std::string("4"));
        QCOMPARE(value(f, "--num-layers-per-virtual-pipeline-stage"), std::string("4")); // 80 / (4 * 5)
        QCOMPARE(value(f, "--context-parallel-size"), std::string("2"));
        QCOMPARE(value(f, "--cp-comm-type"), std::string("p2p"));
        QCOMPARE(value(f, "--micro-batch-size"), std::string("1"));
        QCOMPARE(value(f, "--global-batch-size"), std::string("128"));
        QCOMPARE(value(f, "--seq-length"), std::string("8192"));
        QCOMPARE(value(f, "--num-layers"), std::string("80"));
        QCOMPARE(value(f, "--num-query-groups"), std::string("8"));
        QVERIFY(has(f, "--sequence-parallel"));
        QVERIFY(has(f, "--recompute-activations"));
        QVERIFY(has(f, "--use-distributed-optimizer"));
        QVERIFY(!has(f, "--use-megatron-fsdp"));
        QVERIFY(has(f, "--bf16"));
        QVERIFY(has(f, "--mock-data"));
        // dp is what is left: 64 / (4 * 4 * 2).
        QCOMPARE(s.strategy.dp, 2);
    }

    // MoE, expert parallelism and expert TP, the DeepEP dispatcher, FP8, FSDP, TP overlap, uneven stages.
    void megatron_moe_fp8_fsdp_overlap()
    {
        Scenario s = preset("mixtral-8x7b-64-h100"); // tp 1 pp 4 vpp 8 ep 8 dp 16
        s = with_strategy(s,
            R"({"tp": 2, "dp": 8, "ep": 8, "expert_tp": 1, "zero": 3, "sequence_parallel": true,
                "tp_comm_overlap": true, "recompute": "full"})");
        s.training.precision = Precision::fp8;
        s.training.moe_dispatcher = MoeDispatcher::deepep;
        const LaunchConfig c = export_launch_config(LaunchFormat::megatron, s, LaunchSettings {}, "mix");
        const Flags f = flags_of(run_script(m_dir, c.files[0].content, QStringLiteral("moe.sh")));
        QCOMPARE(value(f, "--num-experts"), std::string("8"));
        QCOMPARE(value(f, "--moe-router-topk"), std::string("2"));
        QCOMPARE(value(f, "--moe-ffn-hidden-size"), std::string("14336"));
        QCOMPARE(value(f, "--expert-model-parallel-size"), std::string("8"));
        QCOMPARE(value(f, "--expert-tensor-parallel-size"), std::string("1"));
        QCOMPARE(value(f, "--tensor-model-parallel-size"), std::string("2"));
        QCOMPARE(value(f, "--num-layers-per-virtual-pipeline-stage"), std::string("1")); // 32 / (4 * 8)
        QCOMPARE(value(f, "--moe-token-dispatcher-type"), std::string("flex"));
        QCOMPARE(value(f, "--moe-flex-dispatcher-backend"), std::string("deepep"));
        QCOMPARE(value(f, "--fp8-format"), std::string("hybrid"));
        QCOMPARE(value(f, "--fp8-recipe"), std::string("tensorwise"));
        QVERIFY(has(f, "--use-megatron-fsdp"));
        QCOMPARE(value(f, "--data-parallel-sharding-strategy"), std::string("optim_grads_params"));
        QVERIFY(has(f, "--tp-comm-overlap"));
        QVERIFY(has(f, "--sequence-parallel"));
        QCOMPARE(value(f, "--recompute-granularity"), std::string("full"));

        // 126 layers over pp 8 (Llama 3.1 405B): the stages as the model spreads them, exactly: first/last stage
        // counts around even middle stages, or the whole layout with virtual stages.
        const std::string uneven = R"({"pp": 8, "dp": 256, "vpp": 1, "schedule": "1f1b", "first_stage_layers": null,
            "last_stage_layers": null})";
        Scenario big = with_strategy(preset("llama3.1-405b-16k-h100"), uneven);
        const Flags b = flags_of(run_script(m_dir,
            export_launch_config(LaunchFormat::megatron, big, LaunchSettings {}, "405b").files[0].content,
            QStringLiteral("big.sh")));
        QCOMPARE(value(b, "--decoder-first-pipeline-num-layers"), std::string("15")); // 15 + 6 x 16 + 15
        QCOMPARE(value(b, "--decoder-last-pipeline-num-layers"), std::string("15"));
        QVERIFY(!has(b, "--pipeline-model-parallel-layout"));
        Scenario virt = with_strategy(big, R"({"vpp": 2, "schedule": "interleaved"})");
        const Flags v = flags_of(run_script(m_dir,
            export_launch_config(LaunchFormat::megatron, virt, LaunchSettings {}, "405b").files[0].content,
            QStringLiteral("virt.sh")));
        const std::string layout = value(v, "--pipeline-model-parallel-layout");
        QVERIFY2(layout.rfind("E", 0) == 0 && layout.back() == 'L', layout.c_str());
        QCOMPARE(static_cast<int>(std::count(layout.begin(), layout.end(), '|')), 15); // 16 virtual stages
        QVERIFY(!has(v, "--num-layers-per-virtual-pipeline-stage"));
        // The layout's layers add up to the model's.
        int layers = 0;
        for (std::size_t i = 0; i < layout.size(); ++i)
            if (layout[i] == 't')
                layers += i + 2 < layout.size() + 1 && i + 1 < layout.size() && layout[i + 1] == '*'
                    ? std::stoi(layout.substr(i + 2))
                    : 1;
        QCOMPARE(layers, 126);
    }

    // torchtitan: the TOML's keys (and, where Python has tomllib, Python's own parse of it).
    void torchtitan_toml_carries_the_plan()
    {
        Scenario s = with_strategy(preset("default"), R"({"zero": 3})");
        const LaunchConfig c = export_launch_config(LaunchFormat::torchtitan, s, LaunchSettings {}, "default");
        const std::string& text = c.files.at(0).content;
        const Sections t = toml_sections(text);
        QCOMPARE(t.at("model").at("name"), std::string("llama3"));
        QCOMPARE(t.at("model").at("flavor"), std::string("70B"));
        QCOMPARE(t.at("model").at("hf_assets_path"), std::string("./assets/hf/Llama-3.1-70B"));
        const auto& p = t.at("parallelism");
        QCOMPARE(p.at("tensor_parallel_degree"), std::string("4"));
        QCOMPARE(p.at("pipeline_parallel_degree"), std::string("4"));
        QCOMPARE(p.at("pipeline_parallel_schedule"), std::string("Interleaved1F1B"));
        QCOMPARE(p.at("pipeline_parallel_layers_per_stage"), std::string("4")); // 20 stages: vpp 5 kept
        QCOMPARE(p.at("pipeline_parallel_microbatch_size"), std::string("1"));
        QCOMPARE(p.at("context_parallel_degree"), std::string("2"));
        QCOMPARE(p.at("data_parallel_shard_degree"), std::string("2"));
        QCOMPARE(p.at("data_parallel_replicate_degree"), std::string("1"));
        QCOMPARE(t.at("training").at("global_batch_size"), std::string("128"));
        QCOMPARE(t.at("training").at("local_batch_size"), std::string("64")); // 128 / dp 2, cut into micro-batches
        QCOMPARE(t.at("training").at("seq_len"), std::string("8192"));
        QCOMPARE(t.at("activation_checkpoint").at("mode"), std::string("selective"));
        if (const auto j = python_parse("tomllib", text)) {
            QVERIFY2(!j->is_null(), "tomllib rejected the file");
            QCOMPARE((*j)["parallelism"]["tensor_parallel_degree"].get<int>(), 4);
            QCOMPARE((*j)["parallelism"]["pipeline_parallel_layers_per_stage"].get<int>(), 4);
        }
        // fp8 rowwise through torchao's converter; MoE keys.
        Scenario m = with_strategy(preset("mixtral-8x7b-64-h100"), R"({"zero": 3})");
        m.training.precision = Precision::fp8;
        m.training.fp8_scaling = Fp8Scaling::rowwise;
        const Sections mt
            = toml_sections(export_launch_config(LaunchFormat::torchtitan, m, LaunchSettings {}, "m").files[0].content);
        QCOMPARE(mt.at("quantize.linear.float8").at("recipe_name"), std::string("rowwise"));
        QCOMPARE(mt.at("model").at("converters"),
            std::string("[\"quantize.linear.float8\", \"quantize.grouped_mm.float8\"]"));
        QCOMPARE(mt.at("parallelism").at("expert_parallel_degree"), std::string("8"));
        QCOMPARE(mt.at("parallelism").at("pipeline_parallel_layers_per_stage"), std::string("1")); // vpp 8 kept
    }

    // Mixtral has no torchtitan flavour: said plainly, never replaced by Llama 3 8B.
    void torchtitan_never_substitutes_a_model()
    {
        const Scenario s = with_strategy(preset("mixtral-8x7b-64-h100"), R"({"zero": 3})");
        const LaunchConfig c = export_launch_config(LaunchFormat::torchtitan, s, LaunchSettings {}, "mixtral");
        const Sections t = toml_sections(c.files[0].content);
        QVERIFY(t.at("model").at("flavor") != "8B");
        QCOMPARE(t.at("model").at("flavor"), std::string("mixtral-8x7b"));
        QVERIFY(t.at("model").at("hf_assets_path").find("Llama") == std::string::npos);
        QVERIFY(!c.notes.empty());
        QVERIFY2(c.notes.front().find("no flavour") != std::string::npos, c.notes.front().c_str());
        QVERIFY(c.notes.front().find("num_experts=8") != std::string::npos);
        QVERIFY(c.files[0].content.find("# NOTE: torchtitan v0.2.2 has no flavour") != std::string::npos);
        // Registered flavours are found by shape.
        QCOMPARE(torchtitan_model(preset("llama3.1-405b-16k-h100").model).flavor, std::string("405B"));
        QCOMPARE(
            torchtitan_model(load_scenario_preset("deepseek-v3-2048-h800", PresetCatalog::standard()).model).flavor,
            std::string("671B"));
        QVERIFY(!torchtitan_model(preset("gpt3-175b-1024-a100").model).registered);
    }

    void nemo_yaml_carries_the_plan()
    {
        Scenario s = with_strategy(preset("mixtral-8x7b-64-h100"), R"({"expert_tp": 1, "tp": 2, "dp": 8, "zero": 2,
            "sequence_parallel": true})");
        s.training.precision = Precision::fp8;
        const LaunchConfig c = export_launch_config(LaunchFormat::nemo, s, LaunchSettings {}, "mix");
        const Sections y = yaml_sections(c.files[0].content);
        const auto& m = y.at("model");
        QCOMPARE(m.at("tensor_model_parallel_size"), std::string("2"));
        QCOMPARE(m.at("pipeline_model_parallel_size"), std::string("4"));
        QCOMPARE(m.at("virtual_pipeline_model_parallel_size"), std::string("8"));
        QCOMPARE(m.at("context_parallel_size"), std::string("1"));
        QCOMPARE(m.at("expert_model_parallel_size"), std::string("8"));
        QCOMPARE(m.at("expert_tensor_parallel_size"), std::string("1"));
        QCOMPARE(m.at("num_moe_experts"), std::string("8"));
        QCOMPARE(m.at("moe_router_topk"), std::string("2"));
        QCOMPARE(m.at("sequence_parallel"), std::string("true"));
        QCOMPARE(y.at("train").at("micro_batch_size"), std::string("1"));
        QCOMPARE(y.at("train").at("global_batch_size"), std::string("256"));
        QCOMPARE(y.at("ddp").at("use_megatron_fsdp"), std::string("true"));
        QCOMPARE(y.at("ddp").at("data_parallel_sharding_strategy"), std::string("optim_grads"));
        QCOMPARE(y.at("").at("mixed_precision"), std::string("bf16_with_fp8_current_scaling_mixed"));
        if (const auto j = python_parse("yaml", c.files[0].content)) {
            QVERIFY2(!j->is_null(), "PyYAML rejected the file");
            QCOMPARE((*j)["model"]["expert_model_parallel_size"].get<int>(), 8);
        }
    }

    // The offloads as each framework spells them: Megatron's --cpu-offloading (at most num_layers - 1 layers),
    // DeepSpeed's offload_param with the optimizer (ZeRO-Infinity) and cpu_checkpointing.
    void offloads_in_the_launch_files()
    {
        Scenario m = with_strategy(preset("default"),
            R"({"tp": 4, "pp": 1, "vpp": 1, "schedule": "1f1b", "cp": 1, "dp": 16, "zero": 1, "recompute": "none",
                "offload_activations": true})");
        const LaunchConfig mc = export_launch_config(LaunchFormat::megatron, m, LaunchSettings {}, "off");
        const Flags f = flags_of(run_script(m_dir, mc.files[0].content, QStringLiteral("off.sh")));
        QVERIFY(has(f, "--cpu-offloading"));
        QCOMPARE(value(f, "--cpu-offloading-num-layers"), std::string("79"));
        Scenario d = with_strategy(preset("default"),
            R"({"tp": 1, "pp": 1, "vpp": 1, "schedule": "1f1b", "cp": 1, "dp": 64, "zero": 3, "recompute": "full",
                "sequence_parallel": false, "offload_params": true, "offload_activations": true})");
        const LaunchConfig dc = export_launch_config(LaunchFormat::deepspeed, d, LaunchSettings {}, "ds-off");
        const auto ds = nlohmann::json::parse(dc.find("ds_config.json")->content);
        QCOMPARE(ds["zero_optimization"]["offload_param"]["device"].get<std::string>(), std::string("cpu"));
        QCOMPARE(ds["zero_optimization"]["offload_optimizer"]["device"].get<std::string>(), std::string("cpu"));
        QVERIFY(ds["activation_checkpointing"]["cpu_checkpointing"].get<bool>());
    }

    void deepspeed_config_and_script()
    {
        Scenario s = with_strategy(preset("default"),
            R"({"tp": 4, "pp": 4, "vpp": 1, "schedule": "zb-h1", "cp": 2, "cp_kind": "all-to-all",
                "sequence_parallel": false, "dp": 2, "zero": 1})");
        const LaunchConfig c = export_launch_config(LaunchFormat::deepspeed, s, LaunchSettings {}, "ds");
        QCOMPARE(c.files.size(), std::size_t(2));
        const auto ds = nlohmann::json::parse(c.find("ds_config.json")->content);
        QCOMPARE(ds["train_batch_size"].get<int>(), 128);
        QCOMPARE(ds["train_micro_batch_size_per_gpu"].get<int>(), 1);
        QCOMPARE(ds["gradient_accumulation_steps"].get<int>(), 64); // 128 / (1 * dp 2)
        QCOMPARE(ds["zero_optimization"]["stage"].get<int>(), 1);
        QVERIFY(ds["bf16"]["enabled"].get<bool>());
        // The first key stays first (DeepSpeed's docs order): the ordered JSON is written as built.
        QVERIFY(c.find("ds_config.json")->content.find("train_batch_size")
            < c.find("ds_config.json")->content.find("zero"));
        QDir().mkpath(m_dir.filePath(QStringLiteral("ds")));
        const Flags f
            = flags_of(run_script(m_dir, c.find("train_megatron_deepspeed.sh")->content, QStringLiteral("ds.sh")));
        QCOMPARE(value(f, "--tensor-model-parallel-size"), std::string("4"));
        QCOMPARE(value(f, "--pipeline-model-parallel-size"), std::string("4"));
        QCOMPARE(value(f, "--ds-sequence-parallel-size"), std::string("2"));
        QVERIFY(has(f, "--enable-zbh1-pipeline"));
        QVERIFY(!has(f, "--sequence-parallel"));
        QCOMPARE(value(f, "--zero-stage"), std::string("1"));
        QCOMPARE(value(f, "--micro-batch-size"), std::string("1"));
        QCOMPARE(value(f, "--global-batch-size"), std::string("128"));
        QCOMPARE(value(f, "--num-key-value-heads"), std::string("8"));
        QVERIFY(value(f, "--deepspeed_config").find("ds_config.json") != std::string::npos);
        QCOMPARE(value(f, "--data-path"), std::string("/data/corpus_text_document"));
        QCOMPARE(value(f, "--tokenizer-type"), std::string("GPT2BPETokenizer")); // Megatron-DeepSpeed needs one named
        QVERIFY(std::any_of(c.notes.begin(), c.notes.end(),
            [](const std::string& n) { return n.find("GPT-2 BPE has 50,257 tokens") != std::string::npos; }));
        QVERIFY(!ds.contains("fp32_allreduce"));
        // The fp32 gradient all-reduce, which DeepSpeed runs only without ZeRO.
        Scenario fp32_reduce = with_strategy(preset("default"),
            R"({"tp": 4, "pp": 4, "vpp": 1, "schedule": "1f1b", "cp": 1, "sequence_parallel": false, "dp": 4,
                "zero": 0})");
        fp32_reduce.training.grad_reduce_in_fp32 = true;
        const LaunchConfig r = export_launch_config(LaunchFormat::deepspeed, fp32_reduce, LaunchSettings {}, "ds32");
        QVERIFY(nlohmann::json::parse(r.find("ds_config.json")->content)["fp32_allreduce"].get<bool>());
        const LaunchConfig mr = export_launch_config(LaunchFormat::megatron, fp32_reduce, LaunchSettings {}, "mr");
        QVERIFY(mr.files[0].content.find("--accumulate-allreduce-grads-in-fp32") != std::string::npos);
        QVERIFY(mr.files[0].content.find("--grad-reduce-in-bf16") == std::string::npos);
        // Megatron-LM keeps fp32 main gradients under --bf16 unless told otherwise.
        Scenario bf16_grads = preset("default");
        bf16_grads.training.grad_reduce_in_bf16 = true;
        const LaunchConfig br = export_launch_config(LaunchFormat::megatron, bf16_grads, LaunchSettings {}, "br");
        QVERIFY(br.files[0].content.find("--grad-reduce-in-bf16") != std::string::npos);
        // Selective recomputation by module, as Megatron-LM names it.
        Scenario modules = preset("default");
        modules.strategy.recompute = Recompute::selective;
        modules.strategy.recompute_modules
            = recompute_module_bit(RecomputeModule::layernorm) | recompute_module_bit(RecomputeModule::mlp);
        const LaunchConfig rm = export_launch_config(LaunchFormat::megatron, modules, LaunchSettings {}, "rm");
        QVERIFY(rm.files[0].content.find("--recompute-granularity selective") != std::string::npos);
        QVERIFY(rm.files[0].content.find("--recompute-modules layernorm mlp") != std::string::npos);
        QVERIFY(rm.files[0].content.find("--recompute-activations") == std::string::npos);
    }

    // Refused, naming the feature and the framework (exit 2 in the CLI).
    void refuses_what_the_framework_cannot_run()
    {
        const Scenario zb = with_strategy(preset("default"), R"({"schedule": "zb-h1", "vpp": 1})");
        std::string e = refusal(LaunchFormat::megatron, zb);
        QVERIFY2(e.find("strategy.schedule") != std::string::npos && e.find("megatron") != std::string::npos
                && e.find("zb-h1") != std::string::npos,
            e.c_str());
        e = refusal(LaunchFormat::nemo, zb);
        QVERIFY2(e.find("zb-h1") != std::string::npos, e.c_str());
        const Scenario dual = load_scenario_preset("deepseek-v3-2048-h800", PresetCatalog::standard());
        e = refusal(LaunchFormat::megatron, dual);
        QVERIFY2(e.find("dualpipe") != std::string::npos, e.c_str());
        e = refusal(LaunchFormat::torchtitan, dual);
        QVERIFY2(e.find("dualpipe") != std::string::npos && e.find("torchtitan") != std::string::npos, e.c_str());
        e = refusal(LaunchFormat::deepspeed, preset("default")); // interleaved + ring CP
        QVERIFY2(e.find("interleaved") != std::string::npos && e.find("ring context parallelism") != std::string::npos,
            e.c_str());
        Scenario fp16 = with_strategy(preset("default"), R"({"zero": 3})");
        fp16.training.precision = Precision::fp16;
        e = refusal(LaunchFormat::torchtitan, fp16);
        QVERIFY2(e.find("training.precision") != std::string::npos, e.c_str());
        Scenario rowwise = preset("default");
        rowwise.training.precision = Precision::fp8;
        rowwise.training.fp8_scaling = Fp8Scaling::rowwise;
        e = refusal(LaunchFormat::megatron, rowwise);
        QVERIFY2(e.find("training.fp8_scaling") != std::string::npos, e.c_str());
        Scenario async = with_strategy(preset("default"), R"({"zero": 3, "tp_comm_overlap": true})");
        e = refusal(LaunchFormat::torchtitan, async);
        QVERIFY2(e.find("torch.compile") != std::string::npos, e.c_str());
        async.training.framework = Framework::torchtitan_compile;
        QVERIFY(refusal(LaunchFormat::torchtitan, async).empty());
        QVERIFY(refusal(LaunchFormat::megatron, preset("default")).empty());
    }

    void shell_words()
    {
        QCOMPARE(shell_word("--num-layers"), std::string("--num-layers"));
        QCOMPARE(shell_word("E|t*4"), std::string("'E|t*4'"));
        QCOMPARE(shell_word("it's"), std::string("'it'\\''s'"));
        QCOMPARE(shell_word(""), std::string("''"));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
