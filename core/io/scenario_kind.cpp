#include "io/scenario_kind.hpp"

#include "io/colocation_io.hpp"
#include "io/json_reader.hpp"
#include "io/serving_io.hpp"

namespace parallax {

ScenarioKind scenario_file_kind(const std::string& path)
{
    try {
        const nlohmann::json j = parse_json_text(read_text_file(path), path);
        if (is_colocation_scenario(j))
            return ScenarioKind::colocation;
        return is_serving_scenario(j) ? ScenarioKind::serving : ScenarioKind::training;
    } catch (const std::exception&) {
        return ScenarioKind::training;
    }
}

} // namespace parallax
