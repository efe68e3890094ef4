// The calibration Parallax ships: produced by
//   parallax-cli calibrate ../shared/validation/published-runs.json --cpp
// (Levenberg-Marquardt on log errors with a prior towards 1; see calibration_fit.cpp). Until a fit is
// recorded here the built-in calibration is the identity (uncalibrated physics).
#include "calibration.hpp"

namespace parallax {

const Calibration& builtin_calibration()
{
    static const Calibration c = [] {
        Calibration k;
        k.name = "none";
        k.source = "uncalibrated physics";
        return k;
    }();
    return c;
}

} // namespace parallax
