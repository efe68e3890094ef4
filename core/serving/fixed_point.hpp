#pragma once
// The fixed point x = g(x) of a map of [lo, hi] into itself, found as the root of g(x) - x by the
// Illinois variant of regula falsi (Dowell & Jarratt 1971): the bracket always holds the root, and
// convergence is superlinear, a handful of evaluations where damped iteration takes dozens.
#include <functional>

namespace parallax {

struct FixedPoint {
    double x = 0;
    int evaluations = 0; // calls of g
};

// `g` must map [lo, hi] into itself (a clamped map does); the root is bracketed by lo and hi. Stops
// when |g(x) - x| or the bracket is within rel_tol of x, or after max_evaluations.
FixedPoint solve_fixed_point(
    const std::function<double(double)>& g, double lo, double hi, double rel_tol = 1e-9, int max_evaluations = 100);

} // namespace parallax
