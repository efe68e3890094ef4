#pragma once
// strategy.schedule_program in a scenario: the program as text (a string) or as
// { "stages": [[...], ...], "layout": ..., "order": ... }, checked before anything is costed.
#include "ir/schedule_program.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// Parses and checks; errors are InputErrors naming `file` and `key` (strategy.schedule_program).
const ScheduleProgram* read_schedule_program(const nlohmann::json& j, const std::string& file, const std::string& key);

// A program file: the text format, or torchtitan's CSV when the name ends in .csv.
ScheduleProgram load_schedule_program_file(const std::string& path);

} // namespace parallax
