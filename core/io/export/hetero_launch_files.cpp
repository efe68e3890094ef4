// The files of a mixed plan's export (hetero_launch.hpp): the framework's own files for the uniform degrees,
// the plan's layers per stage, and a launch script that finds each host's node rank in per-group host lists.
#include "io/export/hetero_launch.hpp"

#include "io/export/launch_text.hpp"

#include "io/export/shell_script.hpp"
#include "model/stage_layout.hpp"
#include "spec/hetero_label.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <map>

namespace parallax {

namespace {

using launch_text::num;

std::string stages_text(const std::vector<int>& stages)
{
    std::string out = stages.size() == 1 ? "stage " : "stages ";
    for (std::size_t i = 0; i < stages.size(); ++i)
        out += (i > 0 ? ", " : "") + num(stages[i]);
    return out;
}

// The node order as comment lines: node rank, the group's host, its ranks and stages.
std::vector<std::string> node_lines(const Scenario& s, const HeteroLaunchPlan& p)
{
    std::vector<std::string> out;
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
        const HeteroLaunchNode& node = p.nodes[n];
        out.push_back("node " + num(static_cast<long long>(n)) + ": host " + num(node.node_in_group + 1) + " of "
            + hetero_hosts_variable(node.group) + " (" + s.cluster.group(node.group)->gpu.name + "), ranks "
            + num(node.first_rank) + "-" + num(node.first_rank + p.gpus_per_node - 1) + ", "
            + stages_text(node.stages));
    }
    return out;
}

// Host lists per group, the node order, and this host's node rank: shared by every format's script.
void host_prelude(BashScript& b, const Scenario& s, const HeteroLaunchPlan& p)
{
    std::map<std::string, int> needed;
    for (const HeteroLaunchNode& node : p.nodes)
        needed[node.group] = std::max(needed[node.group], node.node_in_group + 1);
    for (const NodeGroup& g : s.cluster.groups) {
        if (!needed.count(g.name))
            continue;
        const std::string var = hetero_hosts_variable(g.name);
        const std::string n = num(needed[g.name]);
        b.raw(": \"${" + var + ":?set " + var + " to the " + n + " host name(s) of group " + shell_word(g.name) + " ("
            + shell_word(g.gpu.name) + "), space-separated}\"");
        b.raw("read -r -a " + var + "_LIST <<< \"$" + var + "\"");
        b.raw("(( ${#" + var + "_LIST[@]} >= " + n + " )) || { echo \"" + var + " needs " + n
            + " host(s)\" >&2; exit 2; }");
    }
    std::string hosts = "NODE_HOSTS=(";
    for (const HeteroLaunchNode& node : p.nodes)
        hosts += " \"${" + hetero_hosts_variable(node.group) + "_LIST[" + num(node.node_in_group) + "]}\"";
    b.raw(hosts + " )");
    b.raw("THIS_HOST=\"${THIS_HOST:-$(hostname)}\"");
    b.raw("NODE_RANK=\"${NODE_RANK:-}\"");
    b.raw("if [[ -z \"$NODE_RANK\" ]]; then\n    for i in \"${!NODE_HOSTS[@]}\"; do [[ \"${NODE_HOSTS[$i]}\" == "
          "\"$THIS_HOST\" ]] && NODE_RANK=$i; done\nfi");
    b.raw(": \"${NODE_RANK:?this host ($THIS_HOST) is in none of the group host lists: set THIS_HOST or NODE_RANK}\"");
    b.blank();
    b.raw("DISTRIBUTED_ARGS=(\n    --nproc_per_node " + num(p.gpus_per_node) + " --nnodes "
        + num(static_cast<long long>(p.nodes.size()))
        + " --node_rank \"$NODE_RANK\"\n    --master_addr \"${MASTER_ADDR:-${NODE_HOSTS[0]}}\" --master_port "
          "\"${MASTER_PORT:-6000}\"\n)");
}

void header(BashScript& b, const std::string& what, const Scenario& s, const HeteroLaunchPlan& p,
    const Scenario& launched, const std::string& file, const std::vector<std::string>& notes)
{
    b.comment(what + " for " + s.model.name + " on a mixed cluster, written by parallax-cli export from " + file + ".");
    b.comment("Plan: " + hetero_plan_label(s));
    b.comment("Launched as " + plan_summary(launched));
    b.comment("Nodes in node-rank order, so that every stage's ranks land on its group's GPUs:");
    for (const std::string& line : node_lines(s, p))
        b.comment("  " + line);
    b.comment("Run this script once on every host listed; it finds its node rank from the group host lists "
              "(or set NODE_RANK).");
    for (const std::string& n : notes)
        b.comment("NOTE: " + n);
    b.raw("set -euo pipefail");
}

std::string megatron_file(const Scenario& s, const HeteroLaunchPlan& p, const Scenario& launched,
    const LaunchSettings& o, const std::string& file, std::vector<std::string>& notes)
{
    std::vector<ArgGroup> groups = megatron_arg_groups(launched, o, notes);
    for (ArgGroup& g : groups) {
        static const std::string split_flags[] = { "--decoder-first-pipeline-num-layers",
            "--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout" };
        auto& w = g.words;
        for (std::size_t i = 0; i < w.size();)
            if (std::find(std::begin(split_flags), std::end(split_flags), w[i]) != std::end(split_flags))
                w.erase(w.begin() + static_cast<long>(i), w.begin() + static_cast<long>(std::min(i + 2, w.size())));
            else
                ++i;
        const auto pp = std::find(w.begin(), w.end(), "--pipeline-model-parallel-size");
        if (pp != w.end() && pp + 1 != w.end()) {
            const std::vector<std::string> flags = hetero_megatron_split_flags(p.stage_layers);
            w.insert(pp + 2, flags.begin(), flags.end());
        }
    }
    BashScript b;
    header(b, "Megatron-LM pretrain_gpt.py", s, p, launched, file, notes);
    if (!o.framework_path.empty())
        b.raw("MEGATRON_LM=\"${MEGATRON_LM:-" + o.framework_path + "}\"");
    b.raw("MEGATRON_LM=\"${MEGATRON_LM:?set MEGATRON_LM to your Megatron-LM checkout}\"");
    b.raw("export CUDA_DEVICE_MAX_CONNECTIONS=1 # the order of TP/SP communication and compute kernels");
    b.blank();
    host_prelude(b, s, p);
    std::string launch = "torchrun \"${DISTRIBUTED_ARGS[@]}\" \"$MEGATRON_LM/pretrain_gpt.py\"";
    for (const ArgGroup& g : groups) {
        b.blank();
        b.flag_array(g.name, g.words);
        launch += " \\\n    \"${" + g.name + "[@]}\"";
    }
    b.blank();
    b.raw(launch);
    return b.text();
}

// torchtitan's module_fqns_per_model_part for the plan's stages (torchtitan/distributed/pipeline_parallel.py):
// replaces the split the plain generator wrote when its edge-stage form cannot say the plan's.
std::string with_torchtitan_stages(std::string toml, const std::vector<int>& layers)
{
    const std::size_t start = toml.find("# the plan's stages");
    const std::size_t list = toml.find("module_fqns_per_model_part = [", start);
    const std::size_t end = list == std::string::npos ? list : toml.find("\n]\n", list);
    if (start == std::string::npos || end == std::string::npos)
        return toml;
    std::string x = "# the plan's stages, in model order (" + num(static_cast<long long>(layers.size()))
        + " stages)\nmodule_fqns_per_model_part = [\n";
    int layer = 0;
    for (std::size_t k = 0; k < layers.size(); ++k) {
        x += "  [";
        std::string sep;
        if (k == 0) {
            x += "\"tok_embeddings\"";
            sep = ", ";
        }
        for (int i = 0; i < layers[k]; ++i, ++layer) {
            x += sep + "\"layers." + num(layer) + "\"";
            sep = ", ";
        }
        if (k + 1 == layers.size())
            x += sep + "\"norm\", \"output\"";
        x += std::string("]") + (k + 1 == layers.size() ? "" : ",") + "\n";
    }
    return toml.replace(start, end + 3 - start, x + "]\n");
}

std::string torchtitan_file(const Scenario& s, const HeteroLaunchPlan& p, const Scenario& launched,
    const LaunchSettings& o, const std::string& file, std::vector<std::string>& notes)
{
    std::string toml = torchtitan_toml(launched, o, "", notes);
    const StageLayout l { launched.model.layers, p.pp, 1, launched.strategy.first_stage_layers,
        launched.strategy.last_stage_layers };
    for (int k = 0; k < p.pp; ++k)
        if (l.stage_layers(k) != p.stage_layers[static_cast<std::size_t>(k)]) {
            toml = with_torchtitan_stages(std::move(toml), p.stage_layers);
            break;
        }
    std::string head = "# torchtitan job config for a mixed-GPU plan, written by parallax-cli export from " + file
        + "; start it with launch_torchtitan.sh on every host it lists.\n# Plan: " + hetero_plan_label(s) + "\n";
    for (const std::string& line : node_lines(s, p))
        head += "#   " + line + "\n";
    return head + toml;
}

std::string torchtitan_script(const Scenario& s, const HeteroLaunchPlan& p, const Scenario& launched,
    const LaunchSettings& o, const std::string& file, const std::vector<std::string>& notes)
{
    BashScript b;
    header(b, "torchtitan training", s, p, launched, file, notes);
    b.raw("HERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"");
    if (!o.framework_path.empty())
        b.raw("TORCHTITAN=\"${TORCHTITAN:-" + o.framework_path + "}\"");
    b.raw("TORCHTITAN=\"${TORCHTITAN:?set TORCHTITAN to your torchtitan checkout}\"");
    b.blank();
    host_prelude(b, s, p);
    b.blank();
    b.raw("cd \"$TORCHTITAN\"");
    b.raw("torchrun \"${DISTRIBUTED_ARGS[@]}\" -m torchtitan.train --job.config_file \"$HERE/torchtitan.toml\"");
    return b.text();
}

} // namespace

LaunchConfig export_hetero_launch_config(
    LaunchFormat f, const Scenario& s, const LaunchSettings& o, const std::string& file)
{
    if (const std::optional<Unsupported> u = hetero_launch_refusal(f, s))
        throw InputError(file, u->key, u->reason);
    const HeteroLaunchPlan plan = hetero_launch_plan(s);
    const Scenario launched = hetero_launch_equivalent(s, plan);
    LaunchConfig out;
    out.notes.push_back("the stock framework runs every stage with the same kernels; the stages' speeds differ by "
                        "their GPUs, as the plan predicts");
    if (f == LaunchFormat::megatron) {
        out.files.push_back({ "train_megatron.sh", megatron_file(s, plan, launched, o, file, out.notes), 0755 });
    } else {
        out.files.push_back({ "torchtitan.toml", torchtitan_file(s, plan, launched, o, file, out.notes), 0644 });
        out.files.push_back({ "launch_torchtitan.sh", torchtitan_script(s, plan, launched, o, file, out.notes), 0755 });
    }
    return out;
}

} // namespace parallax
