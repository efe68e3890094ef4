// Job templates for the real training frameworks: Megatron-LM (pretrain_gpt.py flags), torchtitan (its TOML)
// and DeepSpeed (ds_config.json with Megatron-DeepSpeed's pretrain_gpt.py). Each is a complete script the
// user can read and edit. The framework's own files and flags come from core's one generator
// (io/export/launch_config.hpp, also behind `parallax-cli export`); this file wraps them into the cluster's
// job, and what a framework cannot run of the plan is written into the script and the run's notes.
#include "io/export/launch_config.hpp"
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

namespace {

// What the framework cannot run of the plan (framework_support.hpp), said in the script and the run's notes:
// a validation run runs the closest plan the framework has, and says so.
void note_unsupported(JobBundle& b, BashScript& s, Framework f, const Scenario& sc)
{
    const std::string fw(to_string(f));
    for (const Unsupported& u : unsupported_plan_features(f, sc.strategy, sc.model))
        note(b, s, fw + " cannot run " + u.feature + " (" + u.key + "): " + u.reason);
    for (const Unsupported& u : unsupported_settings(f, sc.training, sc.model))
        note(b, s, fw + " cannot run " + u.feature + " (" + u.key + "): " + u.reason);
}

void note_all(JobBundle& b, BashScript& s, const std::vector<std::string>& notes)
{
    for (const auto& n : notes)
        note(b, s, n);
}

std::vector<ShellWord> words_of(const std::vector<ArgGroup>& groups)
{
    std::vector<ShellWord> w;
    for (const ArgGroup& g : groups)
        for (const auto& word : g.words)
            w.push_back(lit(word));
    return w;
}

LaunchSettings launch_settings(const JobBundle& b, const std::string& run_id)
{
    LaunchSettings o;
    o.steps = b.steps;
    o.run_label = "run " + run_id;
    return o;
}

} // namespace

void add_megatron_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir)
{
    const std::string& megatron = require_path(req.profile.megatron_path, req, "megatron_path", "Megatron-LM");
    const Scenario& sc = req.scenario;
    b.steps = req.steps > 0 ? req.steps : kFrameworkDefaultSteps;
    b.description = "Megatron-LM " + num(b.world_size) + " GPUs, " + num(b.steps) + " iterations";
    BashScript s;
    write_header(s, req, run_id, "Megatron-LM pretrain_gpt.py on one node (torchrun starts its ranks)");
    note_unsupported(b, s, Framework::megatron, sc);
    std::vector<std::string> notes;
    const std::vector<ArgGroup> groups = megatron_arg_groups(sc, launch_settings(b, run_id), notes);
    note_all(b, s, notes);
    s.comment("Megatron-LM prints `iteration N/ M | ... elapsed time per iteration (ms) | throughput per GPU "
              "(TFLOP/s/GPU)` (--log-throughput) and one `[Rank R] (after K iterations) memory (MB)` report; add "
              "--log-energy on versions that have it for power.");
    write_environment(s, req, run_dir);
    write_node_rendezvous(s);
    s.blank();
    s.comment("The plan as pretrain_gpt.py flags (the same as `parallax-cli export --format megatron`). Mock data "
              "and a null tokenizer: a throughput validation run needs no dataset.");
    s.array("megatron_args", words_of(groups));
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
    b.steps = req.steps > 0 ? req.steps : kFrameworkDefaultSteps;
    b.description = "torchtitan " + num(b.world_size) + " GPUs, " + num(b.steps) + " steps";
    BashScript s;
    write_header(s, req, run_id, "torchtitan on one node (torchrun starts its ranks; the plan is in torchtitan.toml)");
    const Framework fw = launch_framework(LaunchFormat::torchtitan, sc);
    note_unsupported(b, s, fw, sc);
    std::vector<std::string> notes;
    const std::string toml = torchtitan_toml(sc, launch_settings(b, run_id), titan + "/assets/hf", notes);
    note_all(b, s, notes);
    b.files.push_back({ "torchtitan.toml", toml, 0644 });

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
    b.steps = req.steps > 0 ? req.steps : kFrameworkDefaultSteps;
    b.description = "DeepSpeed (Megatron-DeepSpeed) " + num(b.world_size) + " GPUs, " + num(b.steps) + " steps";
    BashScript s;
    write_header(s, req, run_id, "Megatron-DeepSpeed pretrain_gpt.py with DeepSpeed on one node");
    std::vector<std::string> notes;
    const std::vector<ArgGroup> groups = megatron_deepspeed_arg_groups(sc, launch_settings(b, run_id), notes);
    const nlohmann::ordered_json ds = deepspeed_config(sc, notes);
    note_all(b, s, notes); // what was adapted first (the tests and users look for these)
    note_unsupported(b, s, Framework::megatron_deepspeed, sc);
    b.files.push_back({ "ds_config.json", ds.dump(2) + "\n", 0644 });

    s.comment("Megatron-DeepSpeed needs a preprocessed dataset: set DATA_PATH (prefix of the .bin/.idx files) and");
    s.comment("the tokenizer files below, or export them in the cluster profile's env.");
    s.raw(": \"${DATA_PATH:?set DATA_PATH to a Megatron dataset prefix (see the comment above)}\"");
    s.raw(": \"${VOCAB_FILE:?set VOCAB_FILE (gpt2-vocab.json)}\" \"${MERGE_FILE:?set MERGE_FILE (gpt2-merges.txt)}\"");
    write_environment(s, req, run_dir);
    write_node_rendezvous(s);
    std::vector<ShellWord> args = words_of(groups);
    args.push_back(lit("--deepspeed_config"));
    args.push_back(in_run_dir("ds_config.json"));
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
