#include "search/degree_snapping.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

constexpr std::array<std::string_view, kDegreeCount> kDegreeNames
    = { "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch" };
// Fallback order for the absorbing degree: data parallelism first (it changes no per-GPU work
// shape), then the pipeline, then context and tensor parallelism.
constexpr Degree kAbsorberOrder[] = { Degree::dp, Degree::pp, Degree::cp, Degree::tp };
// Handles stay readable: a slider with more stops than this is not draggable by hand.
constexpr int kMaxVirtualStages = 24;
constexpr int kMaxMicroBatch = 64;

std::vector<int> divisors(long long n, long long cap)
{
    std::vector<int> out;
    if (n <= 0)
        return out;
    for (long long i = 1; i * i <= n; ++i) {
        if (n % i != 0)
            continue;
        if (i <= cap)
            out.push_back(static_cast<int>(i));
        const long long j = n / i;
        if (j != i && j <= cap)
            out.push_back(static_cast<int>(j));
    }
    std::sort(out.begin(), out.end());
    return out;
}

void include_value(std::vector<int>& values, int v)
{
    if (v >= 1 && std::find(values.begin(), values.end(), v) == values.end()) {
        values.push_back(v);
        std::sort(values.begin(), values.end());
    }
}

void note(std::vector<CompanionChange>* notes, std::string_view setting, const std::string& from, const std::string& to,
    std::string reason)
{
    if (notes && from != to)
        notes->push_back(CompanionChange { std::string(setting), from, to, std::move(reason) });
}

void note(std::vector<CompanionChange>* notes, Degree d, int from, int to, std::string reason)
{
    note(notes, to_string(d), std::to_string(from), std::to_string(to), std::move(reason));
}

// The first of `rules` that `s` breaks, asked of strategy_rules (the rules are never restated here).
std::optional<Rule> first_broken(const PlanInputs& in, const Strategy& s, std::initializer_list<Rule> rules)
{
    const std::vector<Rule> broken = all_violations(in, s);
    for (Rule r : broken)
        if (std::find(rules.begin(), rules.end(), r) != rules.end())
            return r;
    return std::nullopt;
}

// Lowers degree d of `s` to the largest value that breaks none of `rules`, noting why; leaves it
// (and the rule visible) when no value does.
void pull_back(
    const PlanInputs& in, Strategy& s, Degree d, std::initializer_list<Rule> rules, std::vector<CompanionChange>* notes)
{
    const std::optional<Rule> why = first_broken(in, s, rules);
    if (!why)
        return;
    const std::string reason = explain(*why, in, s);
    const int before = degree_value(s, d);
    for (int v = before - 1; v >= 1; --v) {
        set_degree_value(s, d, v);
        if (!first_broken(in, s, rules)) {
            note(notes, d, before, v, reason);
            return;
        }
    }
    set_degree_value(s, d, before);
}

Strategy companions(const PlanInputs& in, Strategy s, std::vector<CompanionChange>* notes, std::optional<Degree> keep)
{
    // First/last stage layer counts set for another pipeline depth: back to an even split where they no
    // longer fit (Llama 3 405B's 7 + 7 layers of PP 16 would leave 112 of its 126 layers nowhere at PP 2).
    if ((s.first_stage_layers > 0 || s.last_stage_layers > 0) && first_broken(in, s, { Rule::stage_overrides })) {
        const std::string reason = explain(Rule::stage_overrides, in, s);
        const std::string before = std::to_string(s.first_stage_layers) + " / " + std::to_string(s.last_stage_layers);
        s.first_stage_layers = 0;
        s.last_stage_layers = 0;
        note(notes, "first / last stage layers", before, "an even split", reason);
    }
    // Virtual stages need a pipeline and at least one layer per chunk (Narayanan et al. 2021, Sec. 2.2).
    if (keep != Degree::vpp)
        pull_back(in, s, Degree::vpp, { Rule::vpp_needs_pp, Rule::too_few_layers }, notes);
    // The schedule follows the virtual stages (docs/scenario-format.md: vpp > 1 means interleaved 1F1B).
    if (s.vpp == 1 && s.schedule == Schedule::interleaved) {
        s.schedule = Schedule::one_f_one_b;
        note(notes, "schedule", "interleaved", "1f1b", "the interleaved schedule needs vpp > 1");
    } else if (s.vpp > 1 && s.schedule != Schedule::interleaved) {
        const std::string before(to_string(s.schedule));
        s.schedule = Schedule::interleaved;
        note(notes, "schedule", before, "interleaved", "virtual stages (vpp > 1) run the interleaved schedule");
    }
    // The micro-batch must tile the per-replica batch (and, interleaved, give a multiple of pp
    // micro-batches): the largest micro-batch that does.
    if (keep != Degree::micro_batch)
        pull_back(in, s, Degree::micro_batch, { Rule::batch_divisible, Rule::interleaved_microbatches }, notes);
    // Expert parallelism lives inside the DP x CP ranks and must divide the experts.
    if (keep != Degree::ep)
        pull_back(in, s, Degree::ep, { Rule::ep_ranks, Rule::ep_experts }, notes);
    return s;
}

DegreeOption finish(const PlanInputs& in, Strategy s, int value, std::optional<Degree> keep)
{
    DegreeOption o;
    o.value = value;
    o.strategy = companions(in, s, &o.companions, keep);
    o.rule = check_strategy(in, o.strategy);
    if (o.rule != Rule::ok)
        o.why = explain(o.rule, in, o.strategy);
    return o;
}

} // namespace

std::string_view to_string(Degree d)
{
    return kDegreeNames[static_cast<int>(d)];
}

std::optional<Degree> degree_from_string(std::string_view s)
{
    for (Degree d : kAllDegrees)
        if (to_string(d) == s)
            return d;
    return std::nullopt;
}

int degree_value(const Strategy& s, Degree d)
{
    switch (d) {
    case Degree::tp:
        return s.tp;
    case Degree::pp:
        return s.pp;
    case Degree::dp:
        return s.dp;
    case Degree::cp:
        return s.cp;
    case Degree::ep:
        return s.ep;
    case Degree::vpp:
        return s.vpp;
    case Degree::micro_batch:
        return s.micro_batch;
    }
    return 1;
}

void set_degree_value(Strategy& s, Degree d, int value)
{
    switch (d) {
    case Degree::tp:
        s.tp = value;
        break;
    case Degree::pp:
        s.pp = value;
        break;
    case Degree::dp:
        s.dp = value;
        break;
    case Degree::cp:
        s.cp = value;
        break;
    case Degree::ep:
        s.ep = value;
        break;
    case Degree::vpp:
        s.vpp = value;
        break;
    case Degree::micro_batch:
        s.micro_batch = value;
        break;
    }
}

std::optional<Degree> pick_absorber(Degree changed, Degree preferred, const DegreeLocks& locks)
{
    if (!multiplies_gpus(changed))
        return std::nullopt;
    auto usable = [&](Degree d) { return multiplies_gpus(d) && d != changed && !locks.is_locked(d); };
    if (usable(preferred))
        return preferred;
    for (Degree d : kAbsorberOrder)
        if (usable(d))
            return d;
    return std::nullopt;
}

std::vector<int> candidate_values(const PlanInputs& in, const Strategy& s, Degree d)
{
    std::vector<int> values;
    const long long n = in.total_gpus;
    switch (d) {
    case Degree::tp:
        values = divisors(n, std::max<long long>(in.model.heads, s.tp));
        break;
    case Degree::pp:
        values = divisors(n, std::max<long long>(in.model.layers, s.pp));
        break;
    case Degree::cp:
        values = divisors(n, std::max<long long>(in.training.seq_len / 2, s.cp));
        break;
    case Degree::dp:
        values = divisors(n, n);
        break;
    case Degree::ep:
        values = in.model.is_moe() ? divisors(in.model.moe->experts, in.model.moe->experts) : std::vector<int> { 1 };
        break;
    case Degree::vpp: {
        const int max_vpp = s.pp > 1 ? std::min(kMaxVirtualStages, in.model.layers / s.pp) : 1;
        for (int v = 1; v <= max_vpp; ++v)
            values.push_back(v);
        break;
    }
    case Degree::micro_batch: {
        const long long per_replica = s.dp > 0 ? in.training.global_batch / s.dp : in.training.global_batch;
        values = divisors(std::max<long long>(1, per_replica), kMaxMicroBatch);
        break;
    }
    }
    include_value(values, degree_value(s, d));
    return values;
}

std::optional<DegreeOption> change_degree(
    const PlanInputs& in, const Strategy& s, Degree d, int value, std::optional<Degree> absorber)
{
    if (value < 1)
        return std::nullopt;
    Strategy t = s;
    const int old = degree_value(s, d);
    if (multiplies_gpus(d) && value != old) {
        if (!absorber || *absorber == d || !multiplies_gpus(*absorber))
            return std::nullopt;
        const long long keep = static_cast<long long>(degree_value(s, *absorber)) * old;
        if (keep % value != 0)
            return std::nullopt;
        set_degree_value(t, *absorber, static_cast<int>(keep / value));
    }
    set_degree_value(t, d, value);
    return finish(in, t, value, d);
}

std::vector<DegreeOption> degree_options(
    const PlanInputs& in, const Strategy& s, Degree d, Degree preferred_absorber, const DegreeLocks& locks)
{
    std::vector<DegreeOption> out;
    const std::optional<Degree> absorber = pick_absorber(d, preferred_absorber, locks);
    for (int v : candidate_values(in, s, d)) {
        std::optional<DegreeOption> o = change_degree(in, s, d, v, absorber);
        if (!o) {
            DegreeOption blocked;
            blocked.value = v;
            blocked.strategy = s; // as asked, nothing absorbing: breaks the GPU-count rule
            set_degree_value(blocked.strategy, d, v);
            blocked.rule = Rule::gpu_count;
            blocked.why = absorber ? std::string(to_string(*absorber)) + " "
                    + std::to_string(degree_value(s, *absorber)) + " cannot absorb " + std::string(to_string(d)) + " "
                    + std::to_string(v) + " (the GPU count would not divide)"
                                   : "every other GPU degree is locked";
            out.push_back(std::move(blocked));
            continue;
        }
        out.push_back(std::move(*o));
    }
    return out;
}

const DegreeOption* nearest_valid(const std::vector<DegreeOption>& options, double wanted)
{
    const DegreeOption* best = nullptr;
    double best_distance = 0;
    const double target = std::log2(std::max(wanted, 1e-9));
    for (const DegreeOption& o : options) {
        if (!o.valid())
            continue;
        const double distance = std::abs(std::log2(static_cast<double>(o.value)) - target);
        if (!best || distance < best_distance - 1e-12) {
            best = &o;
            best_distance = distance;
        }
    }
    return best;
}

Strategy apply_companions(const PlanInputs& in, Strategy s, std::vector<CompanionChange>* notes)
{
    return companions(in, s, notes, std::nullopt);
}

Strategy refit_to_gpus(const PlanInputs& in, const Strategy& s)
{
    const long long n = in.total_gpus;
    Strategy t = s;
    if (n <= 0)
        return t;
    if (n % t.model_parallel_gpus() == 0) {
        t.dp = static_cast<int>(n / t.model_parallel_gpus());
        Strategy c = companions(in, t, nullptr, std::nullopt);
        if (check_strategy(in, c) == Rule::ok)
            return c;
    }
    // The valid (tp, cp, pp) nearest to the old one on a log scale, dp taking the rest.
    auto distance = [](int a, int b) { return std::abs(std::log2(static_cast<double>(a) / b)); };
    std::optional<Strategy> best;
    double best_cost = 0;
    for (int tp : divisors(n, std::max<long long>(in.model.heads, 1))) {
        for (int cp : divisors(n / tp, std::max<long long>(in.training.seq_len / 2, 1))) {
            for (int pp : divisors(n / (static_cast<long long>(tp) * cp), std::max(in.model.layers, 1))) {
                const double cost = distance(tp, s.tp) + distance(cp, s.cp) + distance(pp, s.pp);
                if (best && cost >= best_cost)
                    continue;
                Strategy c = s;
                c.tp = tp;
                c.cp = cp;
                c.pp = pp;
                c.dp = static_cast<int>(n / (static_cast<long long>(tp) * cp * pp));
                c = companions(in, c, nullptr, std::nullopt);
                if (check_strategy(in, c) != Rule::ok)
                    continue;
                best = c;
                best_cost = cost;
            }
        }
    }
    if (best)
        return *best;
    // Nothing valid: keep each degree as large as the GPU count allows (the rules stay visible).
    auto shrink = [](int v, long long room) {
        int largest = 1;
        for (int d : divisors(room, v))
            largest = std::max(largest, d);
        return largest;
    };
    t.tp = shrink(t.tp, n);
    t.cp = shrink(t.cp, n / t.tp);
    t.pp = shrink(t.pp, n / (static_cast<long long>(t.tp) * t.cp));
    t.dp = static_cast<int>(n / t.model_parallel_gpus());
    return companions(in, t, nullptr, std::nullopt);
}

ToggleOption checked(const PlanInputs& in, const Strategy& s)
{
    ToggleOption o;
    o.strategy = s;
    o.rule = check_strategy(in, s);
    if (o.rule != Rule::ok)
        o.why = explain(o.rule, in, s);
    return o;
}

ToggleOption with_schedule(const PlanInputs& in, const Strategy& s, Schedule schedule)
{
    Strategy t = s;
    t.schedule = schedule;
    std::vector<CompanionChange> notes;
    if (schedule == Schedule::interleaved && t.vpp == 1) {
        // The smallest number of virtual stages that makes a valid plan (2 when none does: marked).
        const int max_vpp = t.pp > 1 ? std::min(kMaxVirtualStages, in.model.layers / t.pp) : 1;
        int chosen = 2;
        for (int v = 2; v <= max_vpp; ++v) {
            Strategy c = t;
            c.vpp = v;
            if (check_strategy(in, companions(in, c, nullptr, Degree::vpp)) == Rule::ok) {
                chosen = v;
                break;
            }
        }
        t.vpp = chosen;
        note(&notes, Degree::vpp, 1, chosen, "the interleaved schedule needs vpp > 1");
    } else if (schedule != Schedule::interleaved && t.vpp > 1) {
        note(&notes, Degree::vpp, t.vpp, 1, "only the interleaved schedule uses virtual stages");
        t.vpp = 1;
    }
    ToggleOption o = checked(in, companions(in, t, &notes, Degree::vpp));
    o.companions = std::move(notes);
    return o;
}

} // namespace parallax
