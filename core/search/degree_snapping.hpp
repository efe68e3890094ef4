#pragma once
// Changing one parallelism degree the way the planner's handles do: the new value, another degree
// absorbing the change so tp*pp*dp*cp keeps the GPU count, and the dependent settings (virtual
// stages, micro-batch, expert parallelism) pulled back into range. Which values are reachable, and
// why the others are not, comes from strategy_rules (one source of truth); nothing here evaluates
// the cost model.
#include "spec/strategy.hpp"
#include "spec/strategy_rules.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax {

enum class Degree : unsigned char { tp, pp, dp, cp, ep, vpp, micro_batch };
inline constexpr int kDegreeCount = 7;
inline constexpr std::array<Degree, kDegreeCount> kAllDegrees
    = { Degree::tp, Degree::pp, Degree::dp, Degree::cp, Degree::ep, Degree::vpp, Degree::micro_batch };

std::string_view to_string(Degree d);
std::optional<Degree> degree_from_string(std::string_view s);
int degree_value(const Strategy& s, Degree d);
void set_degree_value(Strategy& s, Degree d, int value);
// The four degrees whose product is the GPU count (EP reuses DP x CP ranks; vpp and micro-batch
// do not change how many GPUs a plan uses).
constexpr bool multiplies_gpus(Degree d)
{
    return d == Degree::tp || d == Degree::pp || d == Degree::dp || d == Degree::cp;
}

// Which degrees the user pinned (lock icons): a locked degree neither moves nor absorbs.
struct DegreeLocks {
    std::array<bool, kDegreeCount> locked {};
    bool is_locked(Degree d) const { return locked[static_cast<int>(d)]; }
    void set(Degree d, bool on) { locked[static_cast<int>(d)] = on; }
    bool operator==(const DegreeLocks&) const = default;
};

// The degree that absorbs a change of `changed`: `preferred` when it can (a GPU degree, not the
// changed one, not locked), else the first of dp, pp, cp, tp that can. Nothing for degrees that do
// not change the GPU count, or when every other GPU degree is locked.
std::optional<Degree> pick_absorber(Degree changed, Degree preferred, const DegreeLocks& locks);

// A note on a setting that had to follow the change ("vpp 5 -> 1: pp is 1").
struct CompanionChange {
    std::string setting; // "vpp", "schedule", "micro_batch", "ep"
    std::string from;
    std::string to;
    std::string reason;
};

struct DegreeOption {
    int value = 0;
    Strategy strategy; // with the absorber and companions applied
    Rule rule = Rule::ok; // the first rule the strategy still violates
    std::string why; // explain(rule) when it is not ok
    std::vector<CompanionChange> companions;
    bool valid() const { return rule == Rule::ok; }
};

// The values a handle offers for degree `d`: for GPU degrees the divisors of the GPU count, for ep
// the divisors of the expert count, for vpp 1..layers/pp, for micro_batch the divisors of the
// per-replica batch (all capped to keep the list short). Ascending, always includes the current value.
std::vector<int> candidate_values(const PlanInputs& in, const Strategy& s, Degree d);

// `s` with degree d set to `value`, the absorber rebalanced and dependent settings pulled into
// range. Returns nothing when the absorber cannot take the change (the GPU count is not divisible).
std::optional<DegreeOption> change_degree(
    const PlanInputs& in, const Strategy& s, Degree d, int value, std::optional<Degree> absorber);

// Every candidate value of `d` with the resulting strategy and the rule that blocks it, if any.
std::vector<DegreeOption> degree_options(
    const PlanInputs& in, const Strategy& s, Degree d, Degree preferred_absorber, const DegreeLocks& locks);

// The valid option whose value is nearest to `wanted` (on a log scale: degrees are multiplicative),
// ties to the smaller value. Nothing if no option is valid.
const DegreeOption* nearest_valid(const std::vector<DegreeOption>& options, double wanted);

// Pulls vpp, the schedule, micro_batch and ep back into range after another setting changed; the
// notes say what moved and why. Leaves the GPU degrees alone.
Strategy apply_companions(const PlanInputs& in, Strategy s, std::vector<CompanionChange>* notes = nullptr);

// After the cluster's GPU count changed: the strategy with dp (or, when that cannot work, the
// largest model-parallel degrees that still divide) refitted to `in.total_gpus`, companions applied.
Strategy refit_to_gpus(const PlanInputs& in, const Strategy& s);

// A toggle value (schedule, recompute, ZeRO, ...) applied with its companions; the rule says
// whether the result is valid.
struct ToggleOption {
    Strategy strategy;
    Rule rule = Rule::ok;
    std::string why;
    std::vector<CompanionChange> companions;
};
ToggleOption with_schedule(const PlanInputs& in, const Strategy& s, Schedule schedule);
ToggleOption checked(const PlanInputs& in, const Strategy& s);

} // namespace parallax
