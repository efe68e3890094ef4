#include "search/search_removals.hpp"

#include "io/number_format.hpp"
#include "spec/strategy_label.hpp"
#include "spec/units.hpp"

#include <algorithm>

namespace parallax {

void RemovalTally::merge(const RemovalTally& o)
{
    for (std::size_t i = 0; i < kRuleCount; ++i) {
        if (rules[i] == 0 && o.rules[i] > 0)
            rule_example[i] = o.rule_example[i];
        rules[i] += o.rules[i];
    }
    for (std::size_t i = 0; i < kLimitCount; ++i) {
        if (limits[i] == 0 && o.limits[i] > 0)
            limit_example[i] = o.limit_example[i];
        limits[i] += o.limits[i];
    }
    unfit_pins += o.unfit_pins;
    dp_pin_mismatches += o.dp_pin_mismatches;
}

namespace {

std::string framework_reason(const RemovalContext& c, const Strategy& example)
{
    const std::string fw(to_string(c.framework->framework));
    std::string out = fw + " cannot run them (training.framework; --any-framework lifts it)";
    const std::vector<Unsupported> why = unsupported_plan_features(*c.framework, example, c.inputs.model);
    if (!why.empty())
        out += ", e.g. " + strategy_label(example) + ": " + why.front().feature + " (" + why.front().reason + ")";
    return out;
}

// The limit's key and what it says, with the example that broke it.
SearchRemoval limit_removal(Limit l, const RemovalContext& c, const Strategy& example)
{
    switch (l) {
    case Limit::framework:
        return { "training.framework", framework_reason(c, example), 0 };
    case Limit::memory:
        return { "cluster.gpu.memory_GiB",
            "do not fit in the GPU's " + format_number("%.1f GiB", c.capacity_bytes / units::kGiB) + ", e.g. "
                + strategy_label(example),
            0 };
    case Limit::headroom:
        return { "search.min_memory_headroom_fraction",
            "leave less than " + format_number("%.0f%%", 100 * c.min_headroom_fraction.value_or(0))
                + " of the GPU's memory free",
            0 };
    case Limit::power_budget:
        return { "search.limits.power_budget_kW",
            "draw more than the power budget of " + format_number("%.1f kW", c.power_budget_kW)
                + " (--power-budget-kW)",
            0 };
    case Limit::slowdown:
        return { "search.limits.max_slowdown",
            "are slower than the " + format_number("%.3f s", c.window_s)
                + " per step the energy objective allows (--max-slowdown)",
            0 };
    }
    return {};
}

} // namespace

std::vector<SearchRemoval> describe_removals(const RemovalTally& t, const RemovalContext& c)
{
    std::vector<SearchRemoval> out;
    if (t.unfit_pins > 0)
        out.push_back({ "search.fix",
            "pinned degrees whose product does not divide the " + std::to_string(c.inputs.total_gpus) + " GPUs",
            t.unfit_pins });
    if (t.dp_pin_mismatches > 0)
        out.push_back(
            { "search.fix.dp", "degree combinations that leave another DP than search.fix.dp", t.dp_pin_mismatches });
    for (std::size_t i = 0; i < kRuleCount; ++i)
        if (t.rules[i] > 0) {
            const auto r = static_cast<Rule>(i);
            const Strategy& ex = t.rule_example[i];
            out.push_back({ rule_key(r, ex), "break a rule, e.g. " + explain(r, c.inputs, ex), t.rules[i] });
        }
    for (std::size_t i = 0; i < kLimitCount; ++i)
        if (t.limits[i] > 0) {
            SearchRemoval r = limit_removal(static_cast<Limit>(i), c, t.limit_example[i]);
            r.count = t.limits[i];
            out.push_back(std::move(r));
        }
    std::stable_sort(
        out.begin(), out.end(), [](const SearchRemoval& a, const SearchRemoval& b) { return a.count > b.count; });
    return out;
}

std::string removals_text(const std::vector<SearchRemoval>& removed, const std::string& indent)
{
    std::vector<std::string> counts;
    std::size_t width = 0;
    for (const SearchRemoval& r : removed) {
        counts.push_back(format_grouped(static_cast<double>(r.count)));
        width = std::max(width, counts.back().size());
    }
    std::string out;
    for (std::size_t i = 0; i < removed.size(); ++i) // counts right-aligned, so the keys line up
        out += indent + std::string(width - counts[i].size(), ' ') + counts[i] + "  " + removed[i].key + ": "
            + removed[i].reason + "\n";
    return out;
}

} // namespace parallax
