#include "cli/cli_common.hpp"

#include "cli/cli_logging.hpp"

#include "io/colocation_io.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"

#include <cstdio>
#include <filesystem>

namespace parallax::cli {

Scenario load_scenario_argument(
    const std::string& arg, const PresetCatalog& catalog, ScenarioUse use, bool allow_heterogeneous)
{
    std::error_code ec;
    Scenario s;
    if (!std::filesystem::exists(arg, ec) && catalog.find(PresetKind::scenarios, arg)) {
        qCDebug(lcCli).noquote() << "scenario" << arg.c_str() << "from the presets";
        s = load_scenario_preset(arg, catalog, use);
    } else {
        qCDebug(lcCli).noquote() << "scenario from the file" << arg.c_str();
        if (std::filesystem::is_regular_file(arg, ec)
            && is_colocation_scenario(parse_json_text(read_text_file(arg), arg)))
            throw InputError(arg, "colocation",
                "a co-location scenario: only `predict` reads it so far (docs/serving.md, Co-location)");
        s = load_scenario_file(arg, catalog, use);
    }
    if (!allow_heterogeneous && (s.heterogeneous() || s.cluster.heterogeneous()))
        throw InputError(arg, s.heterogeneous() ? "strategy.stages" : "cluster.groups",
            "heterogeneous scenarios are modelled by `predict` only so far (docs/heterogeneous.md)");
    return s;
}

std::optional<ServingScenario> load_serving_argument(const std::string& arg, const PresetCatalog& catalog)
{
    std::error_code ec;
    if (!std::filesystem::exists(arg, ec)) {
        const PresetEntry* e = catalog.find(PresetKind::scenarios, arg);
        if (e && is_serving_scenario(e->json))
            return parse_serving_scenario(e->json, e->origin, catalog);
        return std::nullopt;
    }
    const nlohmann::json j = parse_json_text(read_text_file(arg), arg);
    if (!is_serving_scenario(j))
        return std::nullopt;
    qCDebug(lcCli).noquote() << "serving scenario from the file" << arg.c_str();
    return parse_serving_scenario(j, arg, catalog);
}

Calibration calibration_argument(const QString& value)
{
    if (value.isEmpty() || value == QLatin1String("builtin"))
        return builtin_calibration();
    if (value == QLatin1String("none"))
        return no_calibration();
    const std::string path = value.toStdString();
    return calibration_from_json(parse_json_text(read_text_file(path), path), path);
}

void print_out(const std::string& text)
{
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

void print_err(const std::string& text)
{
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
}

} // namespace parallax::cli
