#include "serving/colocation_spec.hpp"

namespace parallax {

std::vector<NodeGroup> pool_groups(const ClusterSpec& c)
{
    if (c.heterogeneous())
        return c.groups;
    NodeGroup g;
    g.name = "pool";
    g.gpu = c.gpu;
    g.nodes = c.nodes;
    g.gpus_per_node = c.gpus_per_node;
    g.intra_node = c.intra_node;
    return { g };
}

HostLink group_host_link(const ColocationScenario& s, const NodeGroup& g)
{
    const auto it = s.host_links.find(g.name);
    return it != s.host_links.end() ? it->second : default_host_link(g.gpu);
}

} // namespace parallax
