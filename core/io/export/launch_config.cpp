// The launch files of a plan, per framework: what a format cannot say, and the standalone files of
// `export`. The flags and keys themselves are written by megatron_args.cpp (Megatron-LM, Megatron-DeepSpeed,
// DeepSpeed), torchtitan_config.cpp and nemo_config.cpp.
#include "io/export/launch_config.hpp"

#include "io/export/hetero_launch.hpp"
#include "io/export/launch_plan.hpp"
#include "io/export/launch_text.hpp"
#include "io/export/shell_script.hpp"
#include "ir/schedule_program.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>

namespace parallax {

using launch_text::num;

// ------------------------------------------------------------------------------------------------

std::string_view to_string(LaunchFormat f)
{
    switch (f) {
    case LaunchFormat::megatron:
        return "megatron";
    case LaunchFormat::torchtitan:
        return "torchtitan";
    case LaunchFormat::nemo:
        return "nemo";
    case LaunchFormat::deepspeed:
        return "deepspeed";
    }
    return "megatron";
}

std::optional<LaunchFormat> launch_format_from_string(std::string_view s)
{
    for (LaunchFormat f :
        { LaunchFormat::megatron, LaunchFormat::torchtitan, LaunchFormat::nemo, LaunchFormat::deepspeed })
        if (to_string(f) == s)
            return f;
    return std::nullopt;
}

Framework launch_framework(LaunchFormat f, const Scenario& s)
{
    switch (f) {
    case LaunchFormat::megatron:
    case LaunchFormat::nemo:
        return Framework::megatron;
    case LaunchFormat::torchtitan:
        return s.training.framework == Framework::torchtitan_compile ? Framework::torchtitan_compile
                                                                     : Framework::torchtitan;
    case LaunchFormat::deepspeed:
        return Framework::megatron_deepspeed;
    }
    return Framework::megatron;
}

const LaunchFile* LaunchConfig::find(std::string_view name) const
{
    for (const auto& f : files)
        if (f.name == name)
            return &f;
    return nullptr;
}

std::string plan_summary(const Scenario& s)
{
    const Strategy& st = s.strategy;
    std::string out = s.model.name + ": tp " + num(st.tp) + " pp " + num(st.pp) + " dp " + num(st.dp) + " cp "
        + num(st.cp) + " ep " + num(st.ep) + " vpp " + num(st.vpp) + ", micro-batch " + num(st.micro_batch)
        + ", global batch " + num(s.training.global_batch) + ", seq " + num(s.training.seq_len) + ", "
        + std::string(to_string(s.training.precision)) + ", " + std::string(to_string(st.schedule)) + ", recompute "
        + std::string(to_string(st.recompute)) + ", zero " + num(st.zero) + (st.sequence_parallel ? ", SP" : "");
    return out;
}

// ------------------------------------------------------------------------------------------------
// What a format cannot say

std::vector<Unsupported> launch_unsupported(LaunchFormat f, const Scenario& s)
{
    const Framework fw = launch_framework(f, s);
    std::vector<Unsupported> out = unsupported_plan_features(fw, s.strategy, s.model);
    for (auto& u : unsupported_settings(fw, s.training, s.model))
        out.push_back(std::move(u));
    const ModelSpec& m = s.model;
    if (f == LaunchFormat::deepspeed && m.is_moe() && m.moe->expert_ffn_hidden != m.ffn_hidden)
        out.push_back({ "model.moe.expert_ffn_hidden", "experts of another width than the dense MLP",
            "Megatron-DeepSpeed's experts are copies of the dense MLP (--ffn-hidden-size); it has no expert width "
            "of their own" });
    // Per-range settings have no single launch flag in these generators (Megatron's per-layer recompute
    // counts and specs are not emitted): exporting the plain strategy would run another plan.
    if (s.strategy.layers)
        out.push_back({ "strategy.layers", "settings by layer range",
            "the exported launch files set one value per key for the whole model (docs/composite-strategies.md)" });
    if ((f == LaunchFormat::torchtitan) && m.is_moe() && m.moe->capacity_factor)
        out.push_back({ "model.moe.capacity_factor", "a token-dropping capacity factor",
            "torchtitan's MoE is dropless (torchtitan/models/moe)" });
    return out;
}

// ------------------------------------------------------------------------------------------------
// export: the standalone files

namespace {

std::string megatron_script(const Scenario& sc, const LaunchSettings& o, const std::string& file,
    const std::vector<ArgGroup>& groups, const std::vector<std::string>& notes, bool deepspeed)
{
    const Strategy& st = sc.strategy;
    const long long world = st.total_gpus();
    const long long per_node = std::min<long long>(sc.cluster.gpus_per_node, world);
    const long long nodes = std::max<long long>(1, world / std::max<long long>(1, per_node));
    BashScript s;
    s.comment(std::string(deepspeed ? "Megatron-DeepSpeed" : "Megatron-LM") + " pretrain_gpt.py for " + sc.model.name
        + ", written by parallax-cli export from " + file + ".");
    s.comment("Plan: " + plan_summary(sc));
    s.comment(std::to_string(world) + " GPUs: run this script once per node (" + std::to_string(nodes) + " node"
        + (nodes == 1 ? "" : "s") + " of " + std::to_string(per_node)
        + "); torchrun starts this node's ranks. Set NNODES, NODE_RANK, MASTER_ADDR and MASTER_PORT (srun sets "
          "SLURM_NNODES and SLURM_NODEID, used when they are not).");
    if (deepspeed) {
        s.comment("Megatron-DeepSpeed reads a preprocessed dataset: set DATA_PATH (prefix of the .bin/.idx files),");
        s.comment("VOCAB_FILE and MERGE_FILE (GPT-2 BPE). ds_config.json lies next to this script.");
    }
    for (const auto& n : notes)
        s.comment("NOTE: " + n);
    s.raw("set -euo pipefail");
    const std::string var = deepspeed ? "MEGATRON_DEEPSPEED" : "MEGATRON_LM";
    if (!o.framework_path.empty())
        s.raw(var + "=\"${" + var + ":-" + o.framework_path + "}\"");
    s.raw(var + "=\"${" + var + ":?set " + var + " to your " + (deepspeed ? "Megatron-DeepSpeed" : "Megatron-LM")
        + " checkout}\"");
    if (deepspeed) {
        s.raw(": \"${DATA_PATH:?set DATA_PATH to a Megatron dataset prefix}\"");
        s.raw(": \"${VOCAB_FILE:?set VOCAB_FILE (gpt2-vocab.json)}\" \"${MERGE_FILE:?set MERGE_FILE "
              "(gpt2-merges.txt)}\"");
        s.raw("HERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"");
    }
    if (st.zero < 2)
        s.raw("export CUDA_DEVICE_MAX_CONNECTIONS=1 # the order of TP/SP communication and compute kernels");
    s.blank();
    s.flag_array("DISTRIBUTED_ARGS",
        { "--nproc_per_node", std::to_string(per_node), "--nnodes",
            "${NNODES:-${SLURM_NNODES:-" + std::to_string(nodes) + "}}", "--node_rank",
            "${NODE_RANK:-${SLURM_NODEID:-0}}", "--master_addr", "${MASTER_ADDR:-localhost}", "--master_port",
            "${MASTER_PORT:-6000}" });
    for (const ArgGroup& g : groups) {
        s.blank();
        s.flag_array(g.name, g.words);
    }
    if (deepspeed) {
        s.blank();
        s.raw(
            "DATA_ARGS=(\n    --deepspeed_config \"$HERE/ds_config.json\"\n    --data-path \"$DATA_PATH\" --vocab-file "
            "\"$VOCAB_FILE\" --merge-file \"$MERGE_FILE\"\n)");
    }
    s.blank();
    std::string launch = "torchrun \"${DISTRIBUTED_ARGS[@]}\" \"$" + var + "/pretrain_gpt.py\"";
    for (const ArgGroup& g : groups)
        launch += " \\\n    \"${" + g.name + "[@]}\"";
    if (deepspeed)
        launch += " \\\n    \"${DATA_ARGS[@]}\"";
    s.raw(launch);
    return s.text();
}

std::string fix_shell_defaults(std::string text)
{
    // flag_array quotes "${NNODES:-...}" words (they hold $ and braces): keep them expandable.
    const std::string quoted[] = { "'${NNODES:-${SLURM_NNODES:-", "'${NODE_RANK:-${SLURM_NODEID:-0}}'",
        "'${MASTER_ADDR:-localhost}'", "'${MASTER_PORT:-6000}'" };
    for (const std::string& q : quoted) {
        std::size_t pos = 0;
        while ((pos = text.find(q, pos)) != std::string::npos) {
            const std::size_t end = text.find('\'', pos + 1);
            if (end == std::string::npos)
                break;
            text[pos] = '"';
            text[end] = '"';
            pos = end + 1;
        }
    }
    return text;
}

} // namespace

LaunchConfig export_launch_config(LaunchFormat f, const Scenario& sc, const LaunchSettings& o, const std::string& file)
{
    if (sc.heterogeneous()) // mixed-GPU stages: their own rules and host lists
        return export_hetero_launch_config(f, sc, o, file);
    const std::vector<Unsupported> missing = launch_unsupported(f, sc);
    if (!missing.empty()) {
        const std::string fw(to_string(launch_framework(f, sc)));
        std::string rule = (f == LaunchFormat::nemo ? "NeMo (Megatron-Bridge) runs Megatron-LM's core, and " : "") + fw
            + " cannot run " + missing.front().feature + ": " + missing.front().reason;
        for (std::size_t i = 1; i < missing.size(); ++i)
            rule += "; nor " + missing[i].feature + " (" + missing[i].key + "): " + missing[i].reason;
        throw InputError(file, missing.front().key, rule);
    }
    LaunchConfig out;
    switch (f) {
    case LaunchFormat::megatron: {
        const auto groups = megatron_arg_groups(sc, o, out.notes);
        out.files.push_back(
            { "train_megatron.sh", fix_shell_defaults(megatron_script(sc, o, file, groups, out.notes, false)), 0755 });
        break;
    }
    case LaunchFormat::torchtitan:
        out.files.push_back({ "torchtitan.toml", torchtitan_toml(sc, o, "", out.notes), 0644 });
        if (launch_plan::has_torchtitan_csv(sc.strategy)) {
            out.files.push_back(
                { launch_plan::kTorchtitanScheduleCsv, torchtitan_schedule_csv(*sc.strategy.program), 0644 });
            out.notes.push_back("the schedule program is in " + std::string(launch_plan::kTorchtitanScheduleCsv)
                + " (WAIT and A2A directives, and W~ floating, have no CSV form)");
        }
        break;
    case LaunchFormat::nemo:
        out.files.push_back({ "nemo_megatron_bridge.yaml", nemo_yaml(sc, o, out.notes), 0644 });
        break;
    case LaunchFormat::deepspeed: {
        const auto groups = megatron_deepspeed_arg_groups(sc, o, out.notes);
        out.files.push_back({ "ds_config.json", deepspeed_config(sc, out.notes).dump(2) + "\n", 0644 });
        out.files.push_back({ "train_megatron_deepspeed.sh",
            fix_shell_defaults(megatron_script(sc, o, file, groups, out.notes, true)), 0755 });
        break;
    }
    }
    return out;
}

} // namespace parallax
