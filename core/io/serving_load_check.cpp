#include "io/serving_load_check.hpp"

#include "io/number_format.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace parallax {

namespace {

// Below this share of its concurrency decoding, a loop spends most of every request's life before the
// first token: either the engine queues (memory, max_num_seqs), which slows its decodes no further, or the
// load never reached it.
constexpr double kReachedShare = 0.25;
// A more loaded engine decodes no faster: its decode step only grows with the batch. A TPOT this much below
// a less loaded sibling's is beyond the run-to-run spread of repeated rows (6-11% about their mean).
constexpr double kFasterThanSibling = 0.75;

bool closed_loop(const ServingRun& r)
{
    const ServingWorkload& w = r.scenario.serving.workload;
    return r.latencies_measured && r.mode == "aggregated" && w.load == LoadKind::concurrency && w.concurrency > 0
        && w.osl > 1;
}

// Requests past their first token, on average (Little's law over the decode phase): concurrency x the
// decode's share of a request's life.
double decoding_requests(const ServingRun& r)
{
    const ServingWorkload& w = r.scenario.serving.workload;
    const double decode_ms = static_cast<double>(w.osl - 1) * r.tpot_ms;
    return static_cast<double>(w.concurrency) * decode_ms / (r.ttft_ms + decode_ms);
}

// Rows that measure the same deployment at the same lengths, whatever the concurrency or the campaign.
std::string deployment_key(const ServingRun& r)
{
    const ServingScenario& s = r.scenario;
    const InstanceLayout& l = s.deployment.instance;
    const ServingWorkload& w = s.serving.workload;
    return r.engine + "|" + s.model.name + "|" + r.gpu + "|" + std::to_string(l.tp) + "x" + std::to_string(l.pp) + "x"
        + std::to_string(l.ep) + "x" + std::to_string(l.attention_dp) + "|"
        + std::to_string(static_cast<int>(s.serving.precision.weights)) + "|"
        + std::to_string(static_cast<int>(s.serving.precision.kv_cache)) + "|" + std::to_string(w.isl) + "x"
        + std::to_string(w.osl);
}

// The least loaded sibling that decodes markedly slower than `r`, if any.
const ServingRun* slower_sibling(const ServingRun& r, const std::vector<const ServingRun*>& siblings)
{
    const ServingRun* found = nullptr;
    for (const ServingRun* s : siblings) {
        if (s->scenario.serving.workload.concurrency >= r.scenario.serving.workload.concurrency)
            continue;
        if (r.tpot_ms >= kFasterThanSibling * s->tpot_ms)
            continue;
        if (!found || s->scenario.serving.workload.concurrency < found->scenario.serving.workload.concurrency)
            found = s;
    }
    return found;
}

std::string reason(const ServingRun& r, const ServingRun& sibling)
{
    const auto ms = [](double v) { return (v >= 1000 ? format_grouped(v) : format_number("%.3g", v)) + " ms"; };
    const std::string c = std::to_string(r.scenario.serving.workload.concurrency);
    return "inconsistent measurement: at concurrency " + c + " its TTFT (" + ms(r.ttft_ms) + ") and TPOT ("
        + ms(r.tpot_ms) + ") leave " + format_number("%.0f", decoding_requests(r))
        + " requests past their first token on average (Little's law), yet it decodes faster than the same "
          "deployment at concurrency "
        + std::to_string(sibling.scenario.serving.workload.concurrency) + " (" + sibling.id + ": " + ms(sibling.tpot_ms)
        + "): the stated load did not reach the engine, so the row measures a smaller one (workload.concurrency)";
}

} // namespace

void skip_loads_that_missed_the_engine(std::vector<ServingRun>& runs, std::vector<ServingSkip>& skipped)
{
    std::map<std::string, std::vector<const ServingRun*>> by_deployment;
    for (const ServingRun& r : runs)
        if (closed_loop(r))
            by_deployment[deployment_key(r)].push_back(&r);
    std::vector<ServingSkip> found;
    for (const ServingRun& r : runs) {
        if (!closed_loop(r)
            || decoding_requests(r) >= kReachedShare * static_cast<double>(r.scenario.serving.workload.concurrency))
            continue;
        if (const ServingRun* s = slower_sibling(r, by_deployment[deployment_key(r)]))
            found.push_back({ r.id, reason(r, *s) });
    }
    if (found.empty())
        return;
    std::vector<ServingRun> kept;
    for (ServingRun& r : runs) {
        const bool refused
            = std::any_of(found.begin(), found.end(), [&](const ServingSkip& k) { return k.id == r.id; });
        if (!refused)
            kept.push_back(std::move(r));
    }
    runs = std::move(kept);
    skipped.insert(skipped.end(), found.begin(), found.end());
}

} // namespace parallax
