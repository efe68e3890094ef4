// Export then import is the same plan: for every launch format and a set of plans that exercise what the
// formats must carry (tensor, pipeline and virtual stages, context and expert parallelism, sequence
// parallelism, ZeRO / FSDP, recompute, fp8 and its recipe), the file `export` writes is read back by
// `import` and the scenario it yields has the original's model, training and strategy. A plan the
// framework cannot express is refused by export, never silently changed.
#include "io/export/launch_config.hpp"
#include "io/import/import_scenario.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <QTest>

#include <sstream>
#include <string>
#include <vector>

using namespace parallax;

namespace {

struct Plan {
    const char* label;
    const char* preset; // presets/scenarios
    const char* cluster; // the cluster preset a user names on import (launch files do not say)
    const char* overrides; // JSON merged into the scenario ("strategy", "training" objects)
};

// Plans chosen so that each format carries at least the degrees it can express.
const std::vector<Plan>& plans()
{
    static const std::vector<Plan> list = {
        { "llama3-70b tp4 pp4 vpp5 dp4 zero1", "default", "dgx-h100-superpod", R"({})" },
        { "llama3-70b tp8 pp2 sp recompute full", "default", "dgx-h100-superpod",
            R"({"strategy": {"tp": 8, "pp": 2, "vpp": 1, "dp": 4, "cp": 1, "schedule": "1f1b", "sequence_parallel": true,
                "recompute": "full", "micro_batch": 1}})" },
        { "llama3-70b fsdp dp64", "default", "dgx-h100-superpod",
            R"({"strategy": {"tp": 1, "pp": 1, "vpp": 1, "dp": 64, "cp": 1, "schedule": "1f1b", "zero": 3, "micro_batch": 1,
                "sequence_parallel": false, "recompute": "full"}})" },
        { "llama3-8b 128k cp", "llama3-8b-128k", "dgx-h100-superpod", R"({})" },
        { "mixtral ep8", "mixtral-8x7b-64-h100", "dgx-h100-superpod", R"({})" },
        { "llama3-70b fp8 delayed", "default", "dgx-h100-superpod",
            R"({"training": {"precision": "fp8", "fp8_scaling": "delayed"}})" },
        { "llama3-70b fp8 tensorwise", "default", "dgx-h100-superpod",
            R"({"training": {"precision": "fp8", "fp8_scaling": "tensorwise"}})" },
        { "llama3-70b B200 mxfp8", "default", "dgx-b200-superpod",
            R"({"cluster": {"gpu": "B200", "intra_node": "nvlink5-nvswitch"},
                "training": {"precision": "fp8", "fp8_scaling": "mxfp8"}})" },
    };
    return list;
}

void merge(nlohmann::json& scenario, const nlohmann::json& overrides)
{
    for (const auto& [section, values] : overrides.items())
        for (const auto& [key, value] : values.items())
            scenario[section][key] = value;
}

// The plan as a user of the format's framework writes it: torchtitan shards with FSDP (ZeRO 3, no
// distributed optimizer of its own); DeepSpeed's pipeline engine runs 1F1B with ZeRO 0/1 and does context
// parallelism as Ulysses. Each stays the plan's degrees: only what the framework has no way to say changes.
nlohmann::json format_overrides(LaunchFormat f, const nlohmann::json& scenario)
{
    switch (f) {
    case LaunchFormat::torchtitan:
        return { { "strategy", { { "zero", 3 } } }, { "training", { { "framework", "torchtitan" } } } };
    case LaunchFormat::deepspeed: {
        nlohmann::json o = { { "strategy", { { "schedule", "1f1b" }, { "vpp", 1 }, { "cp_kind", "all-to-all" } } },
            { "training", { { "framework", "megatron-deepspeed" } } } };
        if (scenario["strategy"].value("zero", 0) > 1)
            o["strategy"]["zero"] = 1;
        if (scenario["strategy"].value("cp", 1) > 1)
            o["strategy"]["sequence_parallel"] = false;
        return o;
    }
    case LaunchFormat::megatron:
    case LaunchFormat::nemo:
        break;
    }
    return nlohmann::json::object();
}

Scenario make_plan(const Plan& p, LaunchFormat f)
{
    nlohmann::json j = scenario_to_json(load_scenario_preset(p.preset, PresetCatalog::standard()));
    merge(j, nlohmann::json::parse(p.overrides));
    merge(j, format_overrides(f, j));
    return parse_scenario(j, p.label, PresetCatalog::standard());
}

// The main file of an export, as the import of that format reads it.
std::string main_file(const LaunchConfig& config, LaunchFormat f)
{
    // DeepSpeed's plan lives in the Megatron-DeepSpeed launcher; ds_config.json holds batch and ZeRO only.
    if (f == LaunchFormat::deepspeed)
        for (const LaunchFile& file : config.files)
            if (file.name.ends_with(".sh"))
                return file.content;
    return config.files.front().content;
}

std::string describe(const Strategy& s)
{
    std::ostringstream o;
    o << "tp " << s.tp << " pp " << s.pp << " dp " << s.dp << " cp " << s.cp << " ep " << s.ep << " vpp " << s.vpp
      << " mb " << s.micro_batch << " sp " << s.sequence_parallel << " rc " << static_cast<int>(s.recompute) << " zero "
      << s.zero << " etp " << s.effective_expert_tp() << " sched " << static_cast<int>(s.schedule);
    return o.str();
}

// What a plan is: the degrees and the memory choices. Overlap switches and the rank order are framework
// settings a launch file may leave to the framework's defaults.
void compare_plans(const Scenario& original, const Scenario& back, const std::string& where)
{
    const Strategy& a = original.strategy;
    const Strategy& b = back.strategy;
    const std::string message = where + ": exported " + describe(a) + ", imported " + describe(b);
    QVERIFY2(a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.cp == b.cp && a.ep == b.ep && a.vpp == b.vpp,
        message.c_str());
    QVERIFY2(a.micro_batch == b.micro_batch && a.sequence_parallel == b.sequence_parallel, message.c_str());
    QVERIFY2(a.recompute == b.recompute && a.zero == b.zero && a.schedule == b.schedule, message.c_str());
    QVERIFY2(a.effective_expert_tp() == b.effective_expert_tp(), message.c_str());
    QVERIFY2(a.offload_optimizer == b.offload_optimizer, message.c_str());

    const TrainingSpec& ta = original.training;
    const TrainingSpec& tb = back.training;
    QVERIFY2(ta.global_batch == tb.global_batch, (where + ": global batch").c_str());
    QVERIFY2(ta.seq_len == tb.seq_len, (where + ": sequence length").c_str());
    QVERIFY2(ta.precision == tb.precision, (where + ": precision").c_str());
    if (ta.precision == Precision::fp8)
        QVERIFY2(ta.fp8_scaling == tb.fp8_scaling, (where + ": fp8 recipe").c_str());

    const ModelSpec& ma = original.model;
    const ModelSpec& mb = back.model;
    QVERIFY2(ma.layers == mb.layers && ma.hidden == mb.hidden && ma.heads == mb.heads && ma.kv_heads == mb.kv_heads
            && ma.ffn_hidden == mb.ffn_hidden,
        (where + ": model shape").c_str());
    QVERIFY2(ma.moe.has_value() == mb.moe.has_value(), (where + ": MoE or dense").c_str());
    if (ma.moe && mb.moe)
        QVERIFY2(ma.moe->experts == mb.moe->experts && ma.moe->top_k == mb.moe->top_k
                && ma.moe->expert_ffn_hidden == mb.moe->expert_ffn_hidden,
            (where + ": experts").c_str());
}

ImportFormat import_format_of(LaunchFormat f)
{
    switch (f) {
    case LaunchFormat::megatron:
    case LaunchFormat::deepspeed:
        return ImportFormat::megatron_args;
    case LaunchFormat::torchtitan:
        return ImportFormat::torchtitan_toml;
    case LaunchFormat::nemo:
        return ImportFormat::nemo_yaml;
    }
    return ImportFormat::megatron_args;
}

} // namespace

class TstRoundTrip : public QObject {
    Q_OBJECT

private slots:
    void export_then_import_is_the_same_plan_data()
    {
        QTest::addColumn<int>("format");
        for (LaunchFormat f :
            { LaunchFormat::megatron, LaunchFormat::torchtitan, LaunchFormat::nemo, LaunchFormat::deepspeed })
            QTest::newRow(std::string(to_string(f)).c_str()) << static_cast<int>(f);
    }

    void export_then_import_is_the_same_plan()
    {
        QFETCH(int, format);
        const auto f = static_cast<LaunchFormat>(format);
        int carried = 0;
        for (const Plan& p : plans()) {
            Scenario original;
            try {
                original = make_plan(p, f);
            } catch (const InputError& e) {
                QFAIL((std::string(p.label) + ": the test's plan is invalid: " + e.what()).c_str());
            }
            const std::string where = std::string(to_string(f)) + " / " + p.label;
            if (!launch_unsupported(f, original).empty()) {
                // Refused as a whole, naming what the framework lacks: never exported as another plan.
                QVERIFY_THROWS_EXCEPTION(InputError, export_launch_config(f, original, {}, p.label));
                qInfo("%s: refused (%s)", where.c_str(), launch_unsupported(f, original).front().feature.c_str());
                continue;
            }
            const LaunchConfig config = export_launch_config(f, original, {}, p.label);
            ImportOptions options;
            options.cluster = p.cluster;
            options.gpus = original.strategy.total_gpus();
            ImportResult back;
            try {
                back = import_launch_config(
                    main_file(config, f), where, import_format_of(f), options, PresetCatalog::standard());
            } catch (const InputError& e) {
                QFAIL((where + ": the exported file does not import: " + e.what()).c_str());
            }
            compare_plans(original, back.parsed, where);
            ++carried;
        }
        // Every format carries most of the plans: a format that refuses everything proves nothing.
        QVERIFY2(carried >= 4, (std::string(to_string(f)) + ": only " + std::to_string(carried) + " plans").c_str());
    }
};

QTEST_APPLESS_MAIN(TstRoundTrip)
#include "tst_round_trip.moc"
