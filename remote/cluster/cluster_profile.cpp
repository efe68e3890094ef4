#include "cluster/cluster_profile.hpp"

#include "io/json_reader.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <cctype>

namespace parallax::remote {

std::string_view to_string(LauncherKind k)
{
    return k == LauncherKind::slurm ? "slurm" : "direct";
}

namespace {

bool has_control(const std::string& s)
{
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// Host and user names reach libssh and ssh_config matching, not a shell; still, a leading '-' or
// whitespace has no business there (it would read as an option to any tool the user copies it into).
void check_name_like(const std::string& value, const std::string& file, const std::string& key, bool required)
{
    if (value.empty()) {
        if (required)
            throw InputError(file, key, "must not be empty");
        return;
    }
    if (value.front() == '-')
        throw InputError(file, key, "must not start with '-': '" + value + "'");
    for (unsigned char c : value) {
        if (c <= 0x20 || c == 0x7f || c == '\'' || c == '"' || c == '`' || c == '$' || c == ';' || c == '\\' || c == '|'
            || c == '&' || c == '<' || c == '>' || c == '(' || c == ')')
            throw InputError(file, key,
                "must be a host name, address or user name: no spaces, quotes or shell characters, found '" + value
                    + "'");
    }
}

void check_text(const std::string& value, const std::string& file, const std::string& key)
{
    if (value.find('\0') != std::string::npos)
        throw InputError(file, key, "must not contain a NUL byte");
}

void check_path(const std::string& value, const std::string& file, const std::string& key)
{
    check_text(value, file, key);
    if (has_control(value))
        throw InputError(file, key, "must not contain control characters (newline, tab, ...)");
}

bool valid_env_name(const std::string& name)
{
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
        return false;
    return std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

std::vector<std::string> get_string_list(JsonObjectReader& r, const std::string& key)
{
    std::vector<std::string> out;
    const nlohmann::json* v = r.raw(key);
    if (!v || v->is_null())
        return out;
    if (!v->is_array())
        r.fail(key, "must be an array of strings, found " + json_type_name(*v));
    for (std::size_t i = 0; i < v->size(); ++i) {
        if (!(*v)[i].is_string())
            r.fail(key + "[" + std::to_string(i) + "]", "must be a string, found " + json_type_name((*v)[i]));
        out.push_back((*v)[i].get<std::string>());
    }
    return out;
}

} // namespace

SshTarget ClusterProfile::ssh_target() const
{
    return ssh_target_for(host);
}

SshTarget ClusterProfile::ssh_target_for(const std::string& other_host) const
{
    SshTarget t;
    t.host = other_host;
    t.port = port;
    t.user = user;
    t.key_file = key_file;
    t.known_hosts = known_hosts;
    t.use_agent = use_agent;
    t.use_ssh_config = use_ssh_config;
    t.connect_timeout = std::chrono::seconds(connect_timeout_s);
    return t;
}

void validate_profile(const ClusterProfile& p, const std::string& file)
{
    if (p.name.empty())
        throw InputError(file, "name", "must not be empty");
    for (unsigned char c : p.name) {
        if (!(std::isalnum(c) || c == '.' || c == '_' || c == '-'))
            throw InputError(file, "name", "may hold letters, digits, '.', '_' and '-' only, found '" + p.name + "'");
    }
    check_name_like(p.host, file, "host", true);
    check_name_like(p.user, file, "user", false);
    if (p.port < 1 || p.port > 65535)
        throw InputError(file, "port", "must be 1..65535");
    for (std::size_t i = 0; i < p.hosts.size(); ++i)
        check_name_like(p.hosts[i], file, "hosts[" + std::to_string(i) + "]", true);
    check_path(p.key_file, file, "key_file");
    check_path(p.known_hosts, file, "known_hosts");
    for (const auto& [key, value] :
        { std::pair { "partition", &p.partition }, { "account", &p.account }, { "qos", &p.qos },
            { "time_limit", &p.time_limit }, { "container", &p.container }, { "gpu_type", &p.gpu_type } })
        check_path(*value, file, key);
    for (std::size_t i = 0; i < p.modules.size(); ++i)
        check_path(p.modules[i], file, "modules[" + std::to_string(i) + "]");
    for (std::size_t i = 0; i < p.extra_sbatch_args.size(); ++i)
        check_path(p.extra_sbatch_args[i], file, "extra_sbatch_args[" + std::to_string(i) + "]");
    for (const auto& [key, value] :
        { std::pair { "work_dir", &p.work_dir }, { "python", &p.python }, { "megatron_path", &p.megatron_path },
            { "torchtitan_path", &p.torchtitan_path }, { "deepspeed_path", &p.deepspeed_path } })
        check_path(*value, file, key);
    if (p.work_dir.empty())
        throw InputError(file, "work_dir", "must not be empty");
    // sbatch expands %j, %u ... in output paths; a literal '%' in the run folder would be rewritten.
    if (p.work_dir.find('%') != std::string::npos)
        throw InputError(file, "work_dir", "must not contain '%' (sbatch would expand it in the log path)");
    if (p.python.empty())
        throw InputError(file, "python", "must not be empty");
    if (!p.container_runtime.empty() && p.container_runtime != "pyxis" && p.container_runtime != "apptainer")
        throw InputError(file, "container_runtime", "must be \"pyxis\", \"apptainer\" or empty");
    if (!p.container.empty() && p.container_runtime.empty())
        throw InputError(file, "container_runtime", "must be \"pyxis\" or \"apptainer\" when container is set");
    for (std::size_t i = 0; i < p.env_names_withheld.size(); ++i)
        if (!valid_env_name(p.env_names_withheld[i]))
            throw InputError(file, "env_names_withheld[" + std::to_string(i) + "]",
                "is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
    for (const auto& [name, value] : p.env) {
        if (!valid_env_name(name))
            throw InputError(file, "env." + name, "is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
        check_text(value, file, "env." + name);
    }
    if (p.gpus_per_node < 0 || p.gpus_per_node > 1024)
        throw InputError(file, "gpus_per_node", "must be 0..1024");
    if (p.cpus_per_task < 0 || p.cpus_per_task > 4096)
        throw InputError(file, "cpus_per_task", "must be 0..4096");
    if (p.connect_timeout_s < 1 || p.connect_timeout_s > 600)
        throw InputError(file, "connect_timeout_s", "must be 1..600");
    if (p.keepalive_s < 0 || p.keepalive_s > 3600)
        throw InputError(file, "keepalive_s", "must be 0..3600 (0: off)");
    if (!(p.poll_min_s >= 0.05 && p.poll_min_s <= p.poll_max_s && p.poll_max_s <= 3600))
        throw InputError(file, "poll_min_s", "must satisfy 0.05 <= poll_min_s <= poll_max_s <= 3600");
}

std::vector<std::string> env_names(const ClusterProfile& p)
{
    std::vector<std::string> names = p.env_names_withheld;
    for (const auto& [k, v] : p.env)
        if (std::find(names.begin(), names.end(), k) == names.end())
            names.push_back(k);
    std::sort(names.begin(), names.end());
    return names;
}

nlohmann::json profile_to_json(const ClusterProfile& p, EnvValues env_values)
{
    nlohmann::ordered_json j;
    j["name"] = p.name;
    j["host"] = p.host;
    j["port"] = p.port;
    j["user"] = p.user;
    j["key_file"] = p.key_file;
    j["known_hosts"] = p.known_hosts;
    j["use_ssh_config"] = p.use_ssh_config;
    j["use_agent"] = p.use_agent;
    j["login_shell"] = p.login_shell;
    j["connect_timeout_s"] = p.connect_timeout_s;
    j["keepalive_s"] = p.keepalive_s;
    j["launcher"] = std::string(to_string(p.launcher));
    j["partition"] = p.partition;
    j["account"] = p.account;
    j["qos"] = p.qos;
    j["time_limit"] = p.time_limit;
    j["extra_sbatch_args"] = p.extra_sbatch_args;
    j["hosts"] = p.hosts;
    j["modules"] = p.modules;
    j["container"] = p.container;
    j["container_runtime"] = p.container_runtime;
    j["gpu_type"] = p.gpu_type;
    j["gpus_per_node"] = p.gpus_per_node;
    j["cpus_per_task"] = p.cpus_per_task;
    j["work_dir"] = p.work_dir;
    j["python"] = p.python;
    j["megatron_path"] = p.megatron_path;
    j["torchtitan_path"] = p.torchtitan_path;
    j["deepspeed_path"] = p.deepspeed_path;
    if (env_values == EnvValues::include) {
        j["env"] = p.env;
        if (!p.env_names_withheld.empty())
            j["env_names_withheld"] = p.env_names_withheld;
    } else {
        j["env_names_withheld"] = env_names(p);
    }
    j["poll_min_s"] = p.poll_min_s;
    j["poll_max_s"] = p.poll_max_s;
    return nlohmann::json(j);
}

ClusterProfile profile_from_json(const nlohmann::json& j, const std::string& file)
{
    if (!j.is_object())
        throw InputError(file, "", "a cluster profile must be a JSON object, found " + json_type_name(j));
    JsonObjectReader r(j, file, "");
    ClusterProfile p;
    p.name = r.get_string("name");
    p.host = r.get_string("host");
    p.port = static_cast<unsigned>(r.get_int("port", 1, 65535, 22));
    p.user = r.get_string("user", std::string());
    p.key_file = r.get_string("key_file", std::string());
    p.known_hosts = r.get_string("known_hosts", std::string());
    p.use_ssh_config = r.get_bool("use_ssh_config", false);
    p.use_agent = r.get_bool("use_agent", true);
    p.login_shell = r.get_bool("login_shell", true);
    p.connect_timeout_s = static_cast<int>(r.get_int("connect_timeout_s", 1, 600, 20));
    p.keepalive_s = static_cast<int>(r.get_int("keepalive_s", 0, 3600, 30));
    p.launcher = r.get_choice("launcher", { "slurm", "direct" }, std::string("slurm")) == "slurm"
        ? LauncherKind::slurm
        : LauncherKind::direct;
    p.partition = r.get_string("partition", std::string());
    p.account = r.get_string("account", std::string());
    p.qos = r.get_string("qos", std::string());
    p.time_limit = r.get_string("time_limit", std::string("00:30:00"));
    p.extra_sbatch_args = get_string_list(r, "extra_sbatch_args");
    p.hosts = get_string_list(r, "hosts");
    p.modules = get_string_list(r, "modules");
    p.container = r.get_string("container", std::string());
    p.container_runtime = r.get_string("container_runtime", std::string());
    p.gpu_type = r.get_string("gpu_type", std::string());
    p.gpus_per_node = static_cast<int>(r.get_int("gpus_per_node", 0, 1024, 0));
    p.cpus_per_task = static_cast<int>(r.get_int("cpus_per_task", 0, 4096, 0));
    p.work_dir = r.get_string("work_dir", std::string("parallax-runs"));
    p.python = r.get_string("python", std::string("/usr/bin/python3"));
    p.megatron_path = r.get_string("megatron_path", std::string());
    p.torchtitan_path = r.get_string("torchtitan_path", std::string());
    p.deepspeed_path = r.get_string("deepspeed_path", std::string());
    if (const nlohmann::json* env = r.raw("env"); env && !env->is_null()) {
        if (!env->is_object())
            r.fail("env", "must be an object of strings, found " + json_type_name(*env));
        for (const auto& [k, v] : env->items()) {
            if (!v.is_string())
                r.fail("env." + k, "must be a string, found " + json_type_name(v));
            p.env[k] = v.get<std::string>();
        }
    }
    p.env_names_withheld = get_string_list(r, "env_names_withheld");
    p.poll_min_s = r.get_number("poll_min_s", 0.05, 3600, 2.0);
    p.poll_max_s = r.get_number("poll_max_s", 0.05, 3600, 30.0);
    r.finish();
    validate_profile(p, file);
    return p;
}

ClusterProfile load_profile_file(const std::string& path)
{
    return profile_from_json(parse_json_text(read_text_file(path), path), path);
}

} // namespace parallax::remote
