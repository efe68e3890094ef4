// String names of the enums, as they appear in scenario files (docs/scenario-format.md).
#include "spec/fabric_spec.hpp"
#include "spec/gpu_spec.hpp"
#include "spec/reliability_spec.hpp"
#include "spec/strategy.hpp"

#include <array>
#include <utility>

namespace parallax {
namespace {

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value)
{
    for (const auto& [e, n] : table)
        if (e == value)
            return n;
    return "?";
}

template <typename E, std::size_t N>
bool value_of(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name, E& out)
{
    for (const auto& [e, n] : table)
        if (n == name) {
            out = e;
            return true;
        }
    return false;
}

constexpr std::array<std::pair<RecomputeModule, std::string_view>, kRecomputeModuleCount> kRecomputeModule { {
    { RecomputeModule::core_attn, "core_attn" },
    { RecomputeModule::layernorm, "layernorm" },
    { RecomputeModule::moe_act, "moe_act" },
    { RecomputeModule::mlp, "mlp" },
    { RecomputeModule::moe, "moe" },
    { RecomputeModule::shared_experts, "shared_experts" },
    { RecomputeModule::mla_up_proj, "mla_up_proj" },
} };
constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecompute { {
    { Recompute::none, "none" },
    { Recompute::selective, "selective" },
    { Recompute::full, "full" },
} };
constexpr std::array<std::pair<Schedule, std::string_view>, 6> kSchedule { {
    { Schedule::gpipe, "gpipe" },
    { Schedule::one_f_one_b, "1f1b" },
    { Schedule::interleaved, "interleaved" },
    { Schedule::zb_h1, "zb-h1" },
    { Schedule::dualpipe, "dualpipe" },
    { Schedule::custom, "custom" },
} };
constexpr std::array<std::pair<Optimizer, std::string_view>, 4> kOptimizer { {
    { Optimizer::adam, "adam" },
    { Optimizer::adam8bit, "adam8bit" },
    { Optimizer::sgd, "sgd" },
    { Optimizer::lion, "lion" },
} };
constexpr std::array<std::pair<CpKind, std::string_view>, 2> kCpKind { {
    { CpKind::ring, "ring" },
    { CpKind::all_to_all, "all-to-all" },
} };
constexpr std::array<std::pair<ParallelDim, std::string_view>, 5> kDim { {
    { ParallelDim::tp, "tp" },
    { ParallelDim::cp, "cp" },
    { ParallelDim::ep, "ep" },
    { ParallelDim::dp, "dp" },
    { ParallelDim::pp, "pp" },
} };
constexpr std::array<std::pair<GpuArchitecture, std::string_view>, 7> kArch { {
    { GpuArchitecture::generic, "generic" },
    { GpuArchitecture::volta, "volta" },
    { GpuArchitecture::ampere, "ampere" },
    { GpuArchitecture::hopper, "hopper" },
    { GpuArchitecture::blackwell, "blackwell" },
    { GpuArchitecture::cdna2, "cdna2" },
    { GpuArchitecture::cdna3, "cdna3" },
} };
constexpr std::array<std::pair<FabricKind, std::string_view>, 8> kFabric { {
    { FabricKind::unspecified, "unspecified" },
    { FabricKind::nvlink, "nvlink" },
    { FabricKind::nvswitch, "nvswitch" },
    { FabricKind::pcie, "pcie" },
    { FabricKind::xgmi, "xgmi" },
    { FabricKind::ib, "ib" },
    { FabricKind::roce, "roce" },
    { FabricKind::tcp, "tcp" },
} };

} // namespace

std::string_view to_string(Recompute r)
{
    return name_of(kRecompute, r);
}
std::string_view to_string(Schedule s)
{
    return name_of(kSchedule, s);
}
std::string_view to_string(Optimizer o)
{
    return name_of(kOptimizer, o);
}
std::string_view to_string(CpKind k)
{
    return name_of(kCpKind, k);
}
std::string_view to_string(ParallelDim d)
{
    return name_of(kDim, d);
}
std::string_view to_string(GpuArchitecture a)
{
    return name_of(kArch, a);
}
std::string_view to_string(FabricKind k)
{
    return name_of(kFabric, k);
}
bool recompute_from_string(std::string_view s, Recompute& out)
{
    return value_of(kRecompute, s, out);
}
std::string_view to_string(RecomputeModule m)
{
    return name_of(kRecomputeModule, m);
}
bool recompute_module_from_string(std::string_view s, RecomputeModule& out)
{
    return value_of(kRecomputeModule, s, out);
}
std::vector<std::string_view> recompute_module_names(unsigned char modules)
{
    std::vector<std::string_view> names;
    for (const auto& [m, name] : kRecomputeModule)
        if (modules & recompute_module_bit(m))
            names.push_back(name);
    return names;
}
bool schedule_from_string(std::string_view s, Schedule& out)
{
    return value_of(kSchedule, s, out);
}
bool optimizer_from_string(std::string_view s, Optimizer& out)
{
    return value_of(kOptimizer, s, out);
}
bool cp_kind_from_string(std::string_view s, CpKind& out)
{
    return value_of(kCpKind, s, out);
}
bool architecture_from_string(std::string_view s, GpuArchitecture& out)
{
    return value_of(kArch, s, out);
}
bool fabric_kind_from_string(std::string_view s, FabricKind& out)
{
    return s != "unspecified" && value_of(kFabric, s, out);
}

std::string to_string(const RankOrder& o)
{
    std::string s;
    for (ParallelDim d : o.dims) {
        if (!s.empty())
            s += '-';
        s += to_string(d);
    }
    return s;
}

std::optional<std::string> rank_order_from_string(std::string_view s, RankOrder& out)
{
    RankOrder result;
    std::array<bool, kParallelDimCount> seen {};
    int count = 0;
    std::size_t pos = 0;
    while (pos <= s.size()) {
        std::size_t dash = s.find('-', pos);
        std::string_view part = s.substr(pos, dash == std::string_view::npos ? std::string_view::npos : dash - pos);
        ParallelDim d;
        if (!value_of(kDim, part, d))
            return "unknown dimension '" + std::string(part) + "' (expected tp, cp, ep, dp, pp joined by '-')";
        if (seen[static_cast<int>(d)])
            return "dimension '" + std::string(part) + "' appears twice";
        if (count >= kParallelDimCount)
            return "too many dimensions";
        seen[static_cast<int>(d)] = true;
        result.dims[count++] = d;
        if (dash == std::string_view::npos)
            break;
        pos = dash + 1;
    }
    if (count != kParallelDimCount)
        return "must name each of tp, cp, ep, dp, pp exactly once, e.g. \"tp-cp-ep-dp-pp\"";
    out = result;
    return std::nullopt;
}

const char* to_string(RecoveryStrategy r)
{
    switch (r) {
    case RecoveryStrategy::checkpoint:
        return "checkpoint";
    case RecoveryStrategy::replica_memory:
        return "replica_memory";
    case RecoveryStrategy::replan:
        return "replan";
    }
    return "checkpoint";
}

} // namespace parallax
