#include "io/hetero_io.hpp"

#include "io/input_limits.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"

#include <set>

namespace parallax {

using nlohmann::json;

namespace {

constexpr long long kMaxNodes = 1'000'000;
constexpr long long kMaxGpusPerNode = 4096;
constexpr long long kMaxLayers = 100000;
constexpr long long kMaxDegree = 1 << 20;
constexpr std::size_t kMaxListEntries = 4096;
constexpr double kMaxPreemptionsPerHour = 1000; // one every 3.6 s: far above any cloud's spot market
constexpr double kMaxDelay_s = 1e9;

void require_list(const json& j, const std::string& file, const std::string& path, const char* what)
{
    if (!j.is_array() || j.empty())
        throw InputError(file, path,
            std::string("must be a non-empty list of ") + what + ", found "
                + (j.is_array() ? std::string("an empty list") : json_type_name(j)));
    if (j.size() > kMaxListEntries)
        throw InputError(file, path, "has more than " + std::to_string(kMaxListEntries) + " entries");
}

std::string item_path(const std::string& path, std::size_t i)
{
    return path + "[" + std::to_string(i) + "]";
}

NodeGroup read_group(const json& j, const std::string& file, const std::string& path, const PresetCatalog& catalog)
{
    JsonObjectReader r(j, file, path);
    NodeGroup g;
    g.name = r.get_string("name");
    if (g.name.empty())
        r.fail("name", "must not be empty: stages name their replicas' group by it");
    const json* gpu = r.raw("gpu");
    if (!gpu)
        r.fail("gpu", "missing (required): a GPU preset name or an inline GPU object");
    g.gpu = resolve_gpu(*gpu, file, r.path_of("gpu"), catalog, &g.gpu_ref);
    g.nodes = static_cast<int>(r.get_int("nodes", 1, kMaxNodes));
    g.gpus_per_node = static_cast<int>(r.get_int("gpus_per_node", 1, kMaxGpusPerNode));
    const json* intra = r.raw("intra_node");
    if (!intra)
        r.fail("intra_node", "missing (required): a fabric preset name or {\"bw_GBps\", \"latency_us\"}");
    g.intra_node = resolve_fabric(*intra, file, r.path_of("intra_node"), catalog, &g.intra_node_ref);
    if (const json* nic = r.raw("inter_node"))
        g.inter_node = resolve_fabric(*nic, file, r.path_of("inter_node"), catalog, &g.inter_node_ref);
    g.preemption_rate_per_hour = r.get_number("preemption_rate_per_hour", 0, kMaxPreemptionsPerHour, 0.0);
    g.replacement_delay_s = r.get_optional_number("replacement_delay_s", 0, kMaxDelay_s);
    r.finish();
    return g;
}

StageReplica read_replica(const json& j, const std::string& file, const std::string& path)
{
    JsonObjectReader r(j, file, path);
    StageReplica rep;
    rep.group = r.get_string("group");
    rep.tp = static_cast<int>(r.get_int("tp", 1, kMaxDegree, 1LL));
    r.finish();
    return rep;
}

} // namespace

void read_node_groups(
    const json& groups, const std::string& file, const std::string& path, const PresetCatalog& catalog, ClusterSpec& c)
{
    require_list(groups, file, path, "node groups");
    std::set<std::string> names;
    long long nodes = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        NodeGroup g = read_group(groups[i], file, item_path(path, i), catalog);
        if (!names.insert(g.name).second)
            throw InputError(file, item_path(path, i) + ".name", "\"" + g.name + "\" names two groups");
        nodes += g.nodes;
        c.groups.push_back(std::move(g));
    }
    if (nodes > kMaxNodes)
        throw InputError(file, path, "the groups hold more than " + std::to_string(kMaxNodes) + " nodes");
    const NodeGroup& first = c.groups.front();
    c.gpu = first.gpu;
    c.gpus_per_node = first.gpus_per_node;
    c.intra_node = first.intra_node;
    c.nodes = static_cast<int>(nodes);
}

std::vector<PipelineStageSpec> read_pipeline_stages(
    const json& stages, const std::string& file, const std::string& path)
{
    require_list(stages, file, path, "stages");
    std::vector<PipelineStageSpec> out;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        JsonObjectReader r(stages[i], file, item_path(path, i));
        PipelineStageSpec st;
        st.layers = static_cast<int>(r.get_int("layers", 1, kMaxLayers));
        const json* replicas = r.raw("replicas");
        if (!replicas)
            r.fail("replicas", "missing (required): [{\"group\": NAME, \"tp\": T}, ...]");
        const std::string rpath = r.path_of("replicas");
        require_list(*replicas, file, rpath, "replicas");
        for (std::size_t k = 0; k < replicas->size(); ++k)
            st.replicas.push_back(read_replica((*replicas)[k], file, item_path(rpath, k)));
        r.finish();
        out.push_back(std::move(st));
    }
    return out;
}

BatchSplit read_batch_split(const json& strategy, const std::string& file)
{
    const auto it = strategy.find("batch_split");
    if (it == strategy.end())
        return BatchSplit::by_speed;
    if (it->is_string() && *it == "by_speed")
        return BatchSplit::by_speed;
    if (it->is_string() && *it == "even")
        return BatchSplit::even;
    throw InputError(
        file, "strategy.batch_split", "must be \"by_speed\" or \"even\", got " + quoted_for_message(it->dump()));
}

const char* to_string(BatchSplit b)
{
    return b == BatchSplit::even ? "even" : "by_speed";
}

json node_groups_to_json(const ClusterSpec& c)
{
    json groups = json::array();
    for (const NodeGroup& g : c.groups) {
        json j;
        j["name"] = g.name;
        j["gpu"] = g.gpu_ref.empty() ? gpu_to_json(g.gpu) : json(g.gpu_ref);
        j["nodes"] = g.nodes;
        j["gpus_per_node"] = g.gpus_per_node;
        j["intra_node"] = g.intra_node_ref.empty() ? fabric_to_json(g.intra_node) : json(g.intra_node_ref);
        if (g.inter_node)
            j["inter_node"] = g.inter_node_ref.empty() ? fabric_to_json(*g.inter_node) : json(g.inter_node_ref);
        if (g.preemption_rate_per_hour > 0)
            j["preemption_rate_per_hour"] = g.preemption_rate_per_hour;
        if (g.replacement_delay_s)
            j["replacement_delay_s"] = *g.replacement_delay_s;
        groups.push_back(j);
    }
    return groups;
}

json pipeline_stages_to_json(const std::vector<PipelineStageSpec>& stages)
{
    json out = json::array();
    for (const PipelineStageSpec& st : stages) {
        json replicas = json::array();
        for (const StageReplica& r : st.replicas)
            replicas.push_back({ { "group", r.group }, { "tp", r.tp } });
        out.push_back({ { "layers", st.layers }, { "replicas", replicas } });
    }
    return out;
}

} // namespace parallax
