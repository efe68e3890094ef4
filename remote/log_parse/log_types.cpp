#include "log_parse/log_types.hpp"

#include <array>
#include <utility>

namespace parallax::remote {

namespace {

using namespace std::string_view_literals;

constexpr std::array<std::pair<LogFormat, std::string_view>, 5> kNames { {
    { LogFormat::auto_detect, "auto"sv },
    { LogFormat::megatron, "megatron"sv },
    { LogFormat::torchtitan, "torchtitan"sv },
    { LogFormat::deepspeed, "deepspeed"sv },
    { LogFormat::probe, "probe"sv },
} };

} // namespace

std::string_view log_format_name(LogFormat format)
{
    for (const auto& [f, name] : kNames) {
        if (f == format)
            return name;
    }
    return "auto"sv;
}

std::optional<LogFormat> log_format_from_name(std::string_view name)
{
    for (const auto& [f, n] : kNames) {
        if (n == name)
            return f;
    }
    return std::nullopt;
}

} // namespace parallax::remote
