#include "io/schedule_program_io.hpp"

#include "io/json_reader.hpp"
#include "spec/input_error.hpp"

namespace parallax {

namespace {

ScheduleProgram read_stages_object(const nlohmann::json& j, const std::string& file, const std::string& key)
{
    JsonObjectReader r(j, file, key);
    const nlohmann::json* stages = r.raw("stages");
    if (!stages || !stages->is_array())
        r.fail("stages", "must be an array with one array of directive strings per stage");
    std::vector<std::vector<std::string>> text;
    for (std::size_t s = 0; s < stages->size(); ++s) {
        const nlohmann::json& stage = (*stages)[s];
        if (!stage.is_array())
            r.fail("stages", "entry " + std::to_string(s) + " must be an array of directive strings");
        text.emplace_back();
        for (const nlohmann::json& d : stage) {
            if (!d.is_string())
                r.fail("stages",
                    "stage " + std::to_string(s) + ": directives are strings such as \"F0.0\", found "
                        + json_type_name(d));
            text.back().push_back(d.get<std::string>());
        }
    }
    const std::string layout = r.get_choice("layout", { "interleaved", "dualpipe" }, std::string("interleaved"));
    const std::string order = r.get_choice("order", { "in-order", "priority" }, std::string("in-order"));
    r.finish();
    ScheduleProgram p = parse_schedule_stages(text);
    p.layout = layout == "dualpipe" ? ChunkLayout::dualpipe : ChunkLayout::interleaved;
    p.order = order == "priority" ? ProgramOrder::priority : ProgramOrder::in_order;
    return p;
}

} // namespace

const ScheduleProgram* read_schedule_program(const nlohmann::json& j, const std::string& file, const std::string& key)
{
    ScheduleProgram p;
    try {
        if (j.is_string())
            p = parse_schedule_text(j.get<std::string>());
        else if (j.is_object())
            p = read_stages_object(j, file, key);
        else
            throw InputError(file, key,
                "must be the program's text (a string) or {\"stages\": [[...], ...]}, found " + json_type_name(j));
        check_schedule_program(p);
    } catch (const ScheduleProgramError& e) {
        throw InputError(file, key, e.what());
    }
    return intern_schedule_program(std::move(p));
}

ScheduleProgram load_schedule_program_file(const std::string& path)
{
    const std::string text = read_text_file(path);
    try {
        ScheduleProgram p = path.ends_with(".csv") ? parse_torchtitan_csv(text) : parse_schedule_text(text);
        check_schedule_program(p);
        return p;
    } catch (const ScheduleProgramError& e) {
        throw InputError(path, "", e.what());
    }
}

} // namespace parallax
