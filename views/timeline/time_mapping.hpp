#pragma once
// Time <-> pixel mapping of the timeline and DAG views, and the ticks of their time axis. Plain
// structs (no Qt) with their own tests: every zoom, pan, fit and hit test goes through them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace parallax::views {

struct TimeMapping {
    double t0_s = 0; // time at pixel x0_px
    double px_per_s = 1; // horizontal scale
    double x0_px = 0; // left edge of the plot area in widget pixels

    // Zoom limits: one pixel is at most a whole day and at least 10 ps (finer than any op).
    static constexpr double kMinPxPerS = 1.0 / 86400.0;
    static constexpr double kMaxPxPerS = 1e11;

    double to_x(double t_s) const { return x0_px + (t_s - t0_s) * px_per_s; }
    double to_t(double x_px) const { return t0_s + (x_px - x0_px) / px_per_s; }
    double s_per_px() const { return 1.0 / px_per_s; }
    // Time at the right edge of a plot area `width_px` wide.
    double t_end(double width_px) const { return t0_s + width_px / px_per_s; }

    // Shows [t_begin, t_end] in `width_px` pixels with a margin (fraction of the span) each side.
    void fit(double t_begin, double t_end, double width_px, double margin = 0.0)
    {
        const double span = std::max(t_end - t_begin, 1e-12);
        const double w = std::max(width_px, 1.0);
        px_per_s = std::clamp(w / (span * (1.0 + 2.0 * margin)), kMinPxPerS, kMaxPxPerS);
        t0_s = t_begin - span * margin;
    }
    // Zooms by `factor` (> 1 zooms in) keeping the time under pixel x where it is.
    void zoom_at(double x_px, double factor)
    {
        if (!(factor > 0))
            return;
        const double t = to_t(x_px);
        px_per_s = std::clamp(px_per_s * factor, kMinPxPerS, kMaxPxPerS);
        t0_s = t - (x_px - x0_px) / px_per_s;
    }
    // Moves the content by dx pixels (drag to the right shows earlier times).
    void pan_px(double dx_px) { t0_s -= dx_px / px_per_s; }
    // Keeps [t0, t_end(width)] inside [lo - slack, hi + slack] where possible.
    void clamp_to(double lo, double hi, double width_px)
    {
        const double view = width_px / px_per_s;
        const double slack = 0.05 * std::max(hi - lo, view);
        if (view >= hi - lo + 2 * slack) {
            t0_s = std::clamp(t0_s, hi + slack - view, lo - slack);
            return;
        }
        t0_s = std::clamp(t0_s, lo - slack, hi + slack - view);
    }
    // The pixel column [x, x+1) covers [to_t(x), to_t(x+1)): column index of time t (floor).
    long long column_of(double t_s) const { return static_cast<long long>(std::floor(to_x(t_s))); }
};

// A time-axis tick: its time and its label.
struct AxisTick {
    double t_s = 0;
    std::string label;
    bool major = true;
};

// Tick step from the 1-2-5 series so ticks are at least `min_spacing_px` apart.
inline double nice_tick_step(double s_per_px, double min_spacing_px)
{
    const double raw = std::max(s_per_px * min_spacing_px, 1e-15);
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : { 1.0, 2.0, 5.0, 10.0 })
        if (m * decade >= raw * (1 - 1e-9))
            return m * decade;
    return 10 * decade;
}

// Unit for labels given the tick step: s, ms, us or ns, and the decimals the step needs.
struct AxisUnit {
    const char* name = "s";
    double scale = 1; // multiply seconds by this
    int decimals = 0;
};

inline AxisUnit axis_unit(double step_s)
{
    AxisUnit u;
    if (step_s >= 1) {
        u = { "s", 1, 0 };
    } else if (step_s >= 1e-3) {
        u = { "ms", 1e3, 0 };
    } else if (step_s >= 1e-6) {
        u = { "\xc2\xb5s", 1e6, 0 };
    } else {
        u = { "ns", 1e9, 0 };
    }
    const double scaled = step_s * u.scale;
    // 0.5 needs 1 decimal, 0.25 would need 2; steps are 1-2-5 so one decimal digit per decade below 1.
    u.decimals = scaled >= 1 - 1e-9 ? 0 : static_cast<int>(std::ceil(-std::log10(scaled) - 1e-9));
    if (step_s >= 1 && scaled < 1)
        u.decimals = 1;
    return u;
}

inline std::string format_tick(double t_s, const AxisUnit& u)
{
    char buf[48];
    const double v = t_s * u.scale + 0.0; // + 0.0 turns -0 into 0
    std::snprintf(buf, sizeof buf, "%.*f %s", u.decimals, v, u.name);
    return buf;
}

// Ticks covering [t_begin, t_end], at least `min_spacing_px` apart at `s_per_px`.
inline std::vector<AxisTick> axis_ticks(double t_begin, double t_end, double s_per_px, double min_spacing_px = 90)
{
    std::vector<AxisTick> ticks;
    if (!(t_end > t_begin) || !(s_per_px > 0))
        return ticks;
    const double step = nice_tick_step(s_per_px, min_spacing_px);
    const AxisUnit unit = axis_unit(step);
    const long long first = static_cast<long long>(std::ceil(t_begin / step - 1e-9));
    const long long last = static_cast<long long>(std::floor(t_end / step + 1e-9));
    if (last - first > 10000)
        return ticks;
    for (long long k = first; k <= last; ++k) {
        const double t = static_cast<double>(k) * step;
        ticks.push_back({ t, format_tick(t, unit), true });
    }
    return ticks;
}

} // namespace parallax::views
