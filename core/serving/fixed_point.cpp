#include "serving/fixed_point.hpp"

#include <cmath>

namespace parallax {

FixedPoint solve_fixed_point(
    const std::function<double(double)>& g, double lo, double hi, double rel_tol, int max_evaluations)
{
    FixedPoint r;
    const auto f = [&](double x) {
        ++r.evaluations;
        return g(x) - x;
    };
    double a = lo;
    double fa = f(a);
    if (hi <= lo || fa <= 0) {
        r.x = lo;
        return r;
    }
    double b = hi;
    double fb = f(b);
    if (fb >= 0) {
        r.x = hi;
        return r;
    }
    // fa > 0 > fb. Illinois: when the same end is kept twice, halve its value so the next secant
    // moves the other end too.
    int kept = 0; // +1: a kept last time, -1: b kept
    r.x = a;
    while (r.evaluations < max_evaluations) {
        const double x = b - fb * (b - a) / (fb - fa);
        const double fx = f(x);
        r.x = x;
        if (std::fabs(fx) <= rel_tol * std::fabs(x) || std::fabs(b - a) <= rel_tol * std::fabs(x))
            break;
        if (fx > 0) {
            a = x;
            fa = fx;
            if (kept == -1)
                fb *= 0.5;
            kept = -1;
        } else {
            b = x;
            fb = fx;
            if (kept == 1)
                fa *= 0.5;
            kept = 1;
        }
    }
    return r;
}

} // namespace parallax
