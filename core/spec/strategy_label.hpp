#pragma once
// The one notation of a plan, used by the planner and by every command's text, CSV and JSON ("label"):
// the GPU product as the planner's strategy panel writes it, then what else sets the plan apart from the
// defaults: "TP 4 × PP 4 × CP 2 × DP 2, EP 8, VPP 5, mb 1, interleaved, ZeRO 1, selective recompute, SP".
// Settings that rarely decide a plan (CP kind, expert TP, overlaps, rank order, stage layers) are left
// out unless a list of plans needs them to tell two plans apart (distinguishing_labels).
#include "spec/strategy.hpp"

#include <string>
#include <vector>

namespace parallax {

// "TP 4 × PP 4 × CP 2 × DP 2": the four degrees whose product is the GPU count.
std::string strategy_degrees_label(const Strategy& s);

// The degrees, then EP and VPP (when > 1), the micro-batch, the schedule, and ZeRO, recompute, SP,
// optimizer offload and a non-Adam optimizer when set.
std::string strategy_label(const Strategy& s);

// One label per plan, in order: strategy_label, plus, for plans that would otherwise read the same, the
// settings that differ among them ("..., all-to-all CP" next to "..., ring CP"). Two different plans
// never get the same label.
std::vector<std::string> distinguishing_labels(const std::vector<Strategy>& plans);

} // namespace parallax
