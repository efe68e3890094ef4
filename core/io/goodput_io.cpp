#include "io/goodput_io.hpp"

#include <cmath>
#include <cstdio>

namespace parallax {

using nlohmann::json;

namespace {

double finite(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

} // namespace

json goodput_to_json(const GoodputReport& g)
{
    const TimeFractions& t = g.time;
    // Fractions of wall time; with fraction_of_throughput they sum to 1.
    json parts = { { "lost_work", finite(t.lost_work) }, { "checkpoint_writes", finite(t.checkpoint_writes) },
        // The first step after a restart is part of restarting.
        { "restart", finite(t.restart + t.warmup) }, { "replacement", finite(t.replacement) },
        { "reload", finite(t.reload) } };
    const RecoveryCost& r = g.recovery_cost;
    return { { "tokens_per_s", finite(g.tokens_per_s) }, { "fraction_of_throughput", finite(g.fraction_of_throughput) },
        { "interruptions_per_day", finite(g.interruptions_per_day) },
        { "failures_per_day", finite(g.failures_per_day) }, { "preemptions_per_day", finite(g.preemptions_per_day) },
        { "checkpoint_interval_s", finite(g.checkpoint_interval_s) },
        { "best_checkpoint_interval_s", finite(g.best_checkpoint_interval_s) },
        { "best_tokens_per_s", finite(g.best_tokens_per_s) }, { "young_interval_s", finite(g.young_interval_s) },
        { "daly_interval_s", finite(g.daly_interval_s) }, { "checkpoint_GB", finite(g.checkpoint_bytes / 1e9) },
        { "checkpoint_write_s", finite(g.checkpoint_write_s) }, { "checkpoint_read_s", finite(g.checkpoint_read_s) },
        { "recovery", to_string(g.recovery) },
        { "recovery_s",
            { { "restart", finite(r.restart_s) }, { "warmup", finite(r.warmup_s) },
                { "replacement", finite(r.replacement_s) }, { "reload", finite(r.reload_s) } } },
        { "lost_time_fraction", parts }, { "assumptions", g.assumptions } };
}

std::string goodput_to_text(const GoodputReport& g)
{
    const TimeFractions& t = g.time;
    const RecoveryCost& r = g.recovery_cost;
    char buf[768];
    std::snprintf(buf, sizeof buf,
        "\ngoodput          %10.0f tokens/s  %.1f%% of the throughput (%s recovery)\n"
        "interruptions    %10.2f a day (%.2f failures, %.2f preemptions)\n"
        "checkpoint       %10.0f s interval (best %.0f s: %.0f tokens/s; Young %.0f s, Daly %.0f s), "
        "%.0f GB, write %.1f s\n"
        "per interruption %10.1f s restart + %.1f s warm-up + %.1f s replacement + %.1f s reload\n"
        "time lost        %9.1f%%: lost work %.1f%%, checkpoint writes %.1f%%, restarts %.1f%%, "
        "replacement %.1f%%, reload %.1f%%\n",
        g.tokens_per_s, 100 * g.fraction_of_throughput, to_string(g.recovery), g.interruptions_per_day,
        g.failures_per_day, g.preemptions_per_day, g.checkpoint_interval_s, g.best_checkpoint_interval_s,
        g.best_tokens_per_s, g.young_interval_s, g.daly_interval_s, g.checkpoint_bytes / 1e9, g.checkpoint_write_s,
        r.restart_s, r.warmup_s, r.replacement_s, r.reload_s, 100 * t.lost(), 100 * t.lost_work,
        100 * t.checkpoint_writes, 100 * (t.restart + t.warmup), 100 * t.replacement, 100 * t.reload);
    std::string out = buf;
    for (const std::string& a : g.assumptions)
        out += "  - " + a + "\n";
    return out;
}

} // namespace parallax
