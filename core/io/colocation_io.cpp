#include "io/colocation_io.hpp"

#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"
#include "serving/serving_rules.hpp"
#include "spec/input_error.hpp"
#include "spec/units.hpp"

#include <algorithm>
#include <set>

namespace parallax {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxModels = 64;
constexpr long long kMaxDegree = 1 << 20;
constexpr double kMaxPriority = 1e6;
constexpr double kMaxLink_GBps = 1e5;

std::string item_path(const std::string& path, std::size_t i)
{
    return path + "[" + std::to_string(i) + "]";
}

// The serving reader names keys from "serving"; here they sit under the model's path.
ServingSpec read_model_serving(const json& v, const std::string& file, const std::string& path)
{
    try {
        return parse_serving_spec(v, file);
    } catch (const InputError& e) {
        throw InputError(file, path + "." + e.key(), e.rule());
    }
}

void read_placement(const json* v, const std::string& file, const std::string& path, ColocatedModel& m)
{
    if (!v || v->is_null())
        return;
    JsonObjectReader r(*v, file, path);
    if (r.has("group"))
        m.group = r.get_string("group");
    if (r.has("tp"))
        m.tp = static_cast<int>(r.get_int("tp", 1, kMaxDegree));
    if (r.has("replicas"))
        m.replicas = static_cast<int>(r.get_int("replicas", 1, kMaxDegree));
    if (r.has("residency")) {
        m.residency = r.get_number("residency", 0.0, 1.0);
        if (*m.residency <= 0.0)
            r.fail("residency", "must be above 0 (the fraction of the layers' weights on the GPUs), got 0");
    }
    r.finish();
}

ColocatedModel read_model(const json& v, const std::string& file, const std::string& path, const PresetCatalog& catalog)
{
    JsonObjectReader r(v, file, path);
    ColocatedModel m;
    const json* model = r.raw("model");
    if (!model)
        r.fail("model", "missing (required): a model preset name or an inline model object");
    m.model = resolve_model(*model, file, r.path_of("model"), catalog, &m.model_ref);
    m.name = r.get_string("name", m.model_ref.empty() ? m.model.name : m.model_ref);
    if (m.name.empty())
        r.fail("name", "must not be empty: the output names each model by it");
    const json* serving = r.raw("serving");
    if (!serving)
        r.fail("serving",
            "missing (required): {\"precision\", \"engine\", \"workload\", \"slo\"} as in a serving scenario");
    m.serving = read_model_serving(*serving, file, path);
    read_placement(r.raw("deployment"), file, r.path_of("deployment"), m);
    m.priority = r.get_number("priority", 1e-6, kMaxPriority, 1.0);
    r.finish();
    return m;
}

HostLink read_host_link(
    const json& v, const std::string& file, const std::string& path, const PresetCatalog& catalog, const GpuSpec& gpu)
{
    HostLink link = default_host_link(gpu);
    if (v.is_string()) {
        std::string ref;
        const FabricSpec f = resolve_fabric(v, file, path, catalog, &ref);
        return { ref, f.bw_Bps, 1, 0, "fabric preset " + ref };
    }
    JsonObjectReader r(v, file, path);
    link.kind = r.get_string("kind", std::string("custom"));
    link.bw_Bps = r.get_number("bw_GBps", 1e-3, kMaxLink_GBps) * units::kGB;
    link.shared_by = static_cast<int>(r.get_int("shared_by", 1, 64, 1));
    link.shared_Bps = r.get_number("shared_GBps", 1e-3, kMaxLink_GBps, 0.0) * units::kGB;
    link.source = r.get_string("source", std::string("scenario"));
    r.finish();
    return link;
}

void read_host_links(const json* v, const std::string& file, const PresetCatalog& catalog, ColocationScenario& s)
{
    if (!v || v->is_null())
        return;
    const std::string path = "colocation.host_links";
    if (!v->is_object())
        throw InputError(file, path, "must be an object of group name -> link, found " + json_type_name(*v));
    const std::vector<NodeGroup> groups = pool_groups(s.cluster);
    for (const auto& item : v->items()) {
        // Named, not a structured binding: clang before 16 cannot capture a binding in the lambda below.
        const std::string& name = item.key();
        const json& link = item.value();
        const auto g = std::find_if(groups.begin(), groups.end(), [&](const NodeGroup& x) { return x.name == name; });
        if (g == groups.end())
            throw InputError(file, path + "." + name, "names no group of the cluster (a plain cluster is \"pool\")");
        s.host_links[name] = read_host_link(link, file, path + "." + name, catalog, g->gpu);
    }
}

PreemptionSettings read_preemption(const json* v, const std::string& file)
{
    PreemptionSettings p;
    if (!v || v->is_null())
        return p;
    JsonObjectReader r(*v, file, "colocation.preemption");
    p.mode = r.get_choice("mode", { "sleep", "restart" }, std::string("sleep")) == "sleep" ? PreemptionMode::sleep
                                                                                           : PreemptionMode::restart;
    p.kv = r.get_choice("kv", { "recompute", "swap" }, std::string("recompute")) == "recompute" ? KvRecovery::recompute
                                                                                                : KvRecovery::swap;
    if (const auto storage = r.get_optional_number("storage_GBps", 1e-3, kMaxLink_GBps))
        p.storage_Bps = *storage * units::kGB;
    r.finish();
    return p;
}

} // namespace

namespace {

// A placement the scenario fixes must name a group, fit one node of it and suit the model.
void check_fixed_placement(
    const ColocatedModel& m, const ColocationScenario& s, const std::string& file, const std::string& path)
{
    const std::vector<NodeGroup> groups = pool_groups(s.cluster);
    const NodeGroup* g = nullptr;
    for (const NodeGroup& x : groups)
        if (m.group && x.name == *m.group)
            g = &x;
    if (m.group && !g)
        throw InputError(file, path + ".group", "names no group of the cluster (a plain cluster is \"pool\")");
    for (const NodeGroup& x : groups) {
        if (g && &x != g)
            continue;
        if (m.tp && *m.tp > x.gpus_per_node)
            throw InputError(file, path + ".tp",
                "an instance stays inside one node: tp " + std::to_string(*m.tp) + " > gpus_per_node "
                    + std::to_string(x.gpus_per_node) + " of group \"" + x.name + "\"");
        const long long per = m.tp ? *m.tp : 1;
        if (m.replicas && per * *m.replicas > x.total_gpus())
            throw InputError(file, path + ".replicas",
                "tp x replicas = " + std::to_string(per * *m.replicas) + " GPUs, more than group \"" + x.name
                    + "\" has (" + std::to_string(x.total_gpus()) + ")");
    }
    if (m.tp) {
        InstanceLayout l;
        l.tp = *m.tp;
        check_instance_layout(
            l, m.model, g ? placed_scenario(s, m, { g->name, l.tp, 1, 1.0 }).cluster : s.cluster, file, path);
    }
}

std::vector<ColocatedModel> read_models(
    const json* v, const std::string& file, const PresetCatalog& catalog, const ColocationScenario& s)
{
    const std::string path = "colocation.models";
    if (!v || !v->is_array() || v->empty())
        throw InputError(file, path,
            "must be a non-empty list of models, each {\"name\", \"model\", \"serving\", \"deployment\"?, "
            "\"priority\"?}"
                + (v ? ", found " + json_type_name(*v) : std::string(", found none")));
    if (v->size() > kMaxModels)
        throw InputError(file, path, "has more than " + std::to_string(kMaxModels) + " models");
    std::vector<ColocatedModel> out;
    std::set<std::string> names;
    for (std::size_t i = 0; i < v->size(); ++i) {
        ColocatedModel m = read_model((*v)[i], file, item_path(path, i), catalog);
        if (!names.insert(m.name).second)
            throw InputError(file, item_path(path, i) + ".name",
                "\"" + m.name + "\" names two models; give each a \"name\" of its own");
        check_fixed_placement(m, s, file, item_path(path, i) + ".deployment");
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace

bool is_colocation_scenario(const json& j)
{
    return j.is_object() && j.contains("colocation");
}

ColocationScenario parse_colocation_scenario(const json& j, const std::string& file, const PresetCatalog& catalog)
{
    JsonObjectReader r(j, file, "");
    ColocationScenario s;
    s.schema = read_scenario_schema(r);
    s.description = r.get_string("description", std::string());
    for (const char* k : { "model", "serving", "deployment", "training", "strategy", "search" })
        if (r.has(k))
            r.fail(k, "not in a co-location scenario: each model of \"colocation.models\" carries its own");
    const json* cluster = r.raw("cluster");
    if (!cluster)
        r.fail("cluster", "missing (required): a cluster preset name or an inline cluster (plain or with groups)");
    s.cluster = resolve_cluster(*cluster, file, "cluster", catalog, &s.refs);
    const json* coloc = r.raw("colocation");
    JsonObjectReader c(*coloc, file, "colocation");
    read_host_links(c.raw("host_links"), file, catalog, s);
    s.preemption = read_preemption(c.raw("preemption"), file);
    s.models = read_models(c.raw("models"), file, catalog, s);
    c.finish();
    r.finish();
    return s;
}

ColocationScenario load_colocation_scenario_file(const std::string& path, const PresetCatalog& catalog)
{
    return parse_colocation_scenario(parse_json_text(read_text_file(path), path), path, catalog);
}

} // namespace parallax
