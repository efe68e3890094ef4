#pragma once
// Counts what removed the candidates of a search (a validity rule, the framework, memory, a limit),
// cheaply enough for the search's inner loop, and turns the counts into SearchRemoval lines that name
// the setting to relax and explain one removed candidate.
#include "search/search.hpp"
#include "spec/framework_support.hpp"
#include "spec/strategy_rules.hpp"

#include <array>
#include <optional>
#include <vector>

namespace parallax {

inline constexpr std::size_t kRuleCount = static_cast<std::size_t>(Rule::offload_params_needs_zero3) + 1;

// What removes a valid strategy after the rules.
enum class Limit : unsigned char { framework, memory, headroom, power_budget, slowdown };
inline constexpr std::size_t kLimitCount = 5;

struct RemovalTally {
    std::array<long long, kRuleCount> rules {};
    std::array<Strategy, kRuleCount> rule_example {};
    std::array<long long, kLimitCount> limits {};
    std::array<Strategy, kLimitCount> limit_example {};
    long long unfit_pins = 0; // degree combinations from search.fix whose product does not divide the GPUs
    long long dp_pin_mismatches = 0; // combinations whose DP is not search.fix.dp

    void count(Rule r, const Strategy& s) noexcept
    {
        const auto i = static_cast<std::size_t>(r);
        if (rules[i]++ == 0)
            rule_example[i] = s;
    }
    void count(Limit l, const Strategy& s) noexcept
    {
        const auto i = static_cast<std::size_t>(l);
        if (limits[i]++ == 0)
            limit_example[i] = s;
    }
    void merge(const RemovalTally& o);
};

// What the explanations need to know about the search that counted.
struct RemovalContext {
    const PlanInputs& inputs;
    std::optional<FrameworkRelease> framework; // unset: --any-framework
    double capacity_bytes = 0;
    std::optional<double> min_headroom_fraction;
    double power_budget_kW = 0;
    double window_s = 0; // the slowest step the energy objective allows (0 = none)
};

std::vector<SearchRemoval> describe_removals(const RemovalTally& t, const RemovalContext& c);

// "removed: 1,234 tensor parallel degree ..." lines for a text report (empty when nothing was removed).
std::string removals_text(const std::vector<SearchRemoval>& removed, const std::string& indent);

} // namespace parallax
