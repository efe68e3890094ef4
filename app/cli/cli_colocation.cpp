// parallax-cli predict COLOCATION.json [--json]: the co-location planner (docs/serving.md, "Co-location").
#include "cli/cli_colocation.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_logging.hpp"

#include "io/colocation_io.hpp"
#include "io/json_reader.hpp"

#include <filesystem>

namespace parallax::cli {

std::optional<int> predict_colocation_argument(const std::string& arg, const PresetCatalog& catalog, bool as_json)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(arg, ec))
        return std::nullopt;
    const nlohmann::json j = parse_json_text(read_text_file(arg), arg);
    if (!is_colocation_scenario(j))
        return std::nullopt;
    qCDebug(lcCli).noquote() << "co-location scenario from the file" << arg.c_str();
    const ColocationScenario s = parse_colocation_scenario(j, arg, catalog);
    const ColocationResult r = plan_colocation(s);
    print_out(as_json ? colocation_result_to_json(r).dump(2) + "\n" : colocation_result_to_text(s, r));
    return r.feasible ? kOk : kInfeasible;
}

} // namespace parallax::cli
