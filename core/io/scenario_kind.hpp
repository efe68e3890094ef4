#pragma once
// Which reader a scenario file needs: a training plan, a serving deployment ("serving") or several
// models sharing a pool ("colocation"). The planner opens each in its own window.
#include <string>

namespace parallax {

enum class ScenarioKind : unsigned char { training, serving, colocation };

// A file that cannot be read or parsed counts as training: the training reader then names what is wrong.
ScenarioKind scenario_file_kind(const std::string& path);

} // namespace parallax
